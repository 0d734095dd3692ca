package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
)

// With --log-format json (or its variable) the last line, the error, is
// JSON too; a --redis that is not a URL says what a Redis URL looks like;
// a search of operators alone says to write the word in lower case.
func TestSmallMessages(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.mustRun(0, "run", "--once", "--regions", "US")
	for _, tc := range []struct {
		name string
		env  map[string]string
		args []string
		want string
	}{
		{"--redis notaurl, JSON by flag", nil, []string{"report", "--redis", "notaurl", "--log-format", "json"}, "redis://"},
		{"--redis notaurl, JSON by variable", map[string]string{"INGEST_LOG_FORMAT": "json"}, []string{"report", "--redis", "notaurl"}, "redis://"},
		{"--redis with another scheme", nil, []string{"report", "--redis", "http://127.0.0.1:6379"}, `scheme "http"`},
		{"search AND", nil, []string{"search", "AND"}, "lower case (and)"},
		{"search NEAR OR", nil, []string{"search", "NEAR OR"}, "lower case (near or)"},
	} {
		for k, v := range tc.env {
			h.set(k, v)
		}
		r := h.mustRun(2, tc.args...)
		for k := range tc.env {
			h.unset(k)
		}
		last := lastLine(r.stderr)
		if !strings.Contains(last, tc.want) || strings.Contains(last, "invalid URL scheme") || strings.Contains(last, "no letters or digits") {
			t.Errorf("%s: want a last line saying %q, got %s", tc.name, tc.want, r)
		}
		if json := tc.env["INGEST_LOG_FORMAT"] == "json" || strings.Contains(strings.Join(tc.args, " "), "--log-format json"); json {
			lines := jsonLines(t, r.stderr)
			if len(lines) == 0 || lines[len(lines)-1]["level"] != "ERROR" || lines[len(lines)-1]["exit"] != float64(2) {
				t.Errorf("%s: want the last line as JSON at ERROR with exit 2, got %s", tc.name, r)
			}
		}
	}
}

// Help and messages that say what happens: backfill --max-units counts
// every pool; history --since in the future is refused, and a video off
// the charts since --since is not "never on a chart"; --keep is bounded;
// chart --language takes language codes, not words.
func TestHelpAndMessagesSayWhatHappens(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	help := strings.Join(strings.Fields(h.mustRun(0, "backfill", "--help").stdout), " ")
	if strings.Contains(help, "units of the default pool") || !strings.Contains(help, "every pool's counted together") {
		t.Errorf("backfill --help: --max-units must say it counts every pool:\n%s", help)
	}
	h.mustRun(0, "run", "--once", "--regions", "US")
	var hits []hit
	if err := json.Unmarshal([]byte(h.mustRun(0, "search", "--json", "--limit", "1", "a").stdout), &hits); err != nil || len(hits) == 0 {
		t.Fatalf("no stored video to ask about: %v", err)
	}
	id := hits[0].ID
	if res := h.run("history", id, "--since", "2099-01-01"); res.code != 2 || !strings.Contains(res.stderr, "--since: 2099-01-01 is in the future") {
		t.Errorf("history --since 2099-01-01: want refused as in the future, got %s", res)
	}
	now := time.Now().UTC().Format(time.RFC3339Nano) // after the run, to the nanosecond
	if res := h.mustRun(0, "history", id, "--since", now); strings.Contains(res.stdout, "never on a chart") || !strings.Contains(res.stdout, "not on a chart since") {
		t.Errorf("history --since now of a video the chart showed before: want \"not on a chart since\", got %s", res)
	}
	for _, args := range [][]string{{"prune", "--keep", "99999999d"}, {"run", "--once", "--keep", "99999999d"}} {
		if res := h.run(args...); res.code != 2 || !strings.Contains(res.stderr, "--keep: want at most 36500d") {
			t.Errorf("%v: want refused with the bound, got %s", args, res)
		}
	}
	if res := h.run("chart", "US", "--language", "klingon"); res.code != 2 || !strings.Contains(res.stderr, `--language: "klingon" is not a BCP-47 language tag`) {
		t.Errorf("chart --language klingon: want exit 2 saying it is no language tag, got %s", res)
	}
	if res := h.mustRun(0, "chart", "US", "--language", "tlh"); !strings.Contains(res.stdout, "no videos in tlh on this chart") {
		t.Errorf("chart --language tlh: want it said that no video is in tlh, got %s", res)
	}
}

// Messages that said what was not so: chart's help promised movement that
// the default standing never shows; a backfill from a future day blamed an
// --until nobody gave; report on no database called a limiter that does
// not exist answering; a dry run took more pages than one search yields;
// run --once counted charts as regions.
func TestMessagesSayWhatIsSo(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	help := h.mustRun(0, "chart", "--help").stdout
	if i := strings.Index(help, "movement"); i < 0 || !strings.Contains(help[max(0, i-80):i], "--derived on") {
		t.Errorf("chart --help: want movement promised only with --derived on, got\n%s", help)
	}
	res := h.mustRun(2, "backfill", "--region", "US", "--since", "2030-01-01")
	if !strings.Contains(res.stderr, "--since 2030-01-01") || strings.Contains(res.stderr, "--until") && !strings.Contains(res.stderr, "without --until") {
		t.Errorf("backfill --since in the future without --until: want --since blamed, got %s", res)
	}
	res = h.mustRun(0, "report")
	if first := strings.SplitN(res.stdout, "\n", 2)[0]; strings.Contains(first, "answering") || !strings.Contains(first, "not there yet") {
		t.Errorf("report with no database: want the limiter said to be not there yet, got %q", first)
	}
	res = h.mustRun(0, "backfill", "--region", "US", "--since", "2026-01-01", "--dry-run")
	took := regexp.MustCompile(`taking at most \d+ units, (\d+) pages`).FindStringSubmatch(res.stdout)
	most := regexp.MustCompile(`at most (\d+) pages of 50 videos`).FindStringSubmatch(res.stdout)
	if took == nil || most == nil || took[1] != most[1] {
		t.Errorf("backfill --dry-run: want the share's pages and the search's pages to agree, got %s", res)
	}
	res = h.mustRun(0, "run", "--once", "--regions", "US", "--categories", "music")
	line := regexp.MustCompile(`(?m)^.*msg="run --once".*$`).FindString(res.stderr)
	if !strings.Contains(line, "charts=2") || strings.Contains(line, "regions=2") {
		t.Errorf("run --once --regions US --categories music: want its summary to count 2 charts, got %q", line)
	}
}

// Small gaps: a near flag is suggested, the plans are listed, a variable
// is blamed for its own value, a port out of range is a usage error, an
// export says what it wrote, and an unreachable Redis is said by the
// limiter, not once per dial by the client library.
func TestSmallGapsClosed(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.mustRun(0, "run", "--once", "--regions", "US")
	for _, tc := range []struct {
		env  string
		args []string
		want string
	}{
		{"", []string{"run", "--region", "US"}, "did you mean --regions?"},
		{"", []string{"tokens", "add", "bob"}, "standard"},
		{"INGEST_SERVE_LISTEN=8080", []string{"serve"}, "INGEST_SERVE_LISTEN (for --listen)"},
		{"", []string{"serve", "--listen", "127.0.0.1:99999"}, "0 to 65535"},
		{"INGEST_RUN_LISTEN=:99999", []string{"run"}, "INGEST_RUN_LISTEN (for --listen): want a port"},
	} {
		if k, v, ok := strings.Cut(tc.env, "="); ok {
			h.set(k, v)
		}
		res := h.run(tc.args...)
		if k, _, ok := strings.Cut(tc.env, "="); ok {
			h.unset(k)
		}
		if res.code != 2 || !strings.Contains(res.stderr, tc.want) {
			t.Errorf("%s: want exit 2 saying %q, got %s", tc.env, tc.want, res)
		}
	}
	out := h.dir + "/out.csv"
	res := h.mustRun(0, "export", "--since", "2020-01-01", "--out", out)
	if !regexp.MustCompile(`msg=exported rows=[1-9]\d* format=csv out=\S+out.csv bytes=[1-9]`).MatchString(res.stderr) {
		t.Errorf("export --out: want it to say its rows, file and size, got %s", res)
	}
	// A database of its own: this one's window lives in its embedded
	// limiter, and a run of it on Redis is refused.
	h.set("INGEST_DB", filepath.Join(h.dir, "on-redis.db"))
	h.set("REDIS_URL", "redis://"+closedAddr(t)+"/0")
	h.set("INGEST_RUN_LIMITER_UNREACHED_OK", "true") // ridden out as an outage, where it would be refused
	res = h.mustRun(0, "run", "--once", "--regions", "GB")
	if n := strings.Count(res.stderr, "go-redis"); n > 0 {
		t.Errorf("an unreachable Redis: the client library's own lines at info, %d of them:\n%s", n, res.stderr)
	}
	if res = h.mustRun(0, "run", "--once", "--regions", "GB", "--log-level", "debug"); !strings.Contains(res.stderr, "component=go-redis") {
		t.Errorf("an unreachable Redis at --log-level debug: want the client library's lines, got %s", res)
	}
}

// 6. Read-only commands work on a database in a directory they cannot
// write, and ignore the settings they do not use.
func TestReadOnlyCommandsAreNotFussy(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.mustRun(0, "run", "--once", "--regions", "US")
	h.set("INGEST_COSTS", filepath.Join(h.dir, "missing.yaml"))
	h.mustRun(0, "search", "football")
	h.set("INGEST_LOG_FORMAT", "xml")
	h.mustRun(0, "completion", "bash")
	h.set("INGEST_LOG_FORMAT", "text")
	h.unset("INGEST_COSTS")
	h.set("YOUTUBE_ENDPOINT", "not a url")
	h.mustRun(0, "report")

	// A directory this process cannot write: as root, run the binary as
	// nobody, since root ignores directory permissions.
	dir, err := os.MkdirTemp("", "ingest-ro-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Chmod(dir, 0o755); os.RemoveAll(dir) })
	bin, db := filepath.Join(dir, "ingest"), filepath.Join(dir, "data", "ingest.db")
	copyFile(t, ingestBin(t), bin, 0o755)
	if err := os.Mkdir(filepath.Dir(db), 0o755); err != nil {
		t.Fatal(err)
	}
	copyFile(t, h.db(), db, 0o644)
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(filepath.Dir(db), 0o555); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"report"}, {"search", "football"}} {
		cmd := exec.Command(bin, args...)
		cmd.Env = scratchEnv("INGEST_DB="+db, "INGEST_QUOTA_KEY="+rep(h).QuotaKey)
		if os.Getuid() == 0 {
			cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
		}
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Run(); err != nil {
			t.Errorf("%s on a database in a read-only directory: %v\n%s", args[0], err, out.String())
		}
	}
	if entries, _ := os.ReadDir(filepath.Dir(db)); len(entries) != 1 {
		t.Errorf("files beside the read-only database: %v", entries)
	}
}

// export --out into a directory that does not exist names the flag and the
// file the user gave, not the temporary file beside it.
func TestExportOutErrorNamesTheFile(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.mustRun(0, "run", "--once", "--regions", "US")
	r := h.run("export", "--since", "2026-01-01", "--out", "/nonexistent/x.csv")
	if r.code != 2 || !strings.Contains(r.stderr, "--out") || !strings.Contains(r.stderr, "/nonexistent/x.csv") ||
		!strings.Contains(r.stderr, "/nonexistent") || strings.Contains(r.stderr, ".x.csv.") {
		t.Errorf("want exit 2 naming --out and /nonexistent/x.csv, not a temporary file, got %s", r)
	}
}

// TestRegionAliasIsSuggested: UK, the United Kingdom's common name, is
// refused as a region code with GB suggested, by --regions and --region
// alike, before anything is spent.
func TestRegionAliasIsSuggested(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	for _, args := range [][]string{{"run", "--once", "--regions", "US,uk"}, {"search", "--region", "uk", "football"}} {
		res := h.mustRun(2, args...)
		if !strings.Contains(res.stderr, `"uk"`) || !strings.Contains(res.stderr, "did you mean GB (United Kingdom)?") {
			t.Errorf("%s with uk: stderr does not suggest GB:\n%s", args[0], res)
		}
	}
	if n := h.fake.Requests(); n != 0 {
		t.Errorf("the refused commands sent %d requests upstream, want 0", n)
	}
}

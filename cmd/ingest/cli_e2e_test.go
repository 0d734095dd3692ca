package main

// End-to-end tests of the CLI's own promises: what it logs, prints and
// checks says what it stored and did.

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/ingestworks/ingest/regions"
)

// A run's log counts what the database holds: a video on several regions'
// charts is one video (and one entry per chart), as the tables count it.
func TestRunOnceLogsStoredCounts(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	res := h.mustRun(0, "run", "--once", "--log-format", "json", "--log-level", "debug")
	db := openDB(t, h.db())
	runs := lastRuns(t, db, "trending")
	var summary map[string]any
	for _, l := range jsonLines(t, res.stderr) {
		switch l["msg"] {
		case "run --once":
			summary = l
		case "pass":
			region, _ := l["region"].(string)
			if got, want := l["videos"], float64(runs[region].Videos); got != want {
				t.Errorf("pass %s logged videos=%v, its run stored %v", region, got, want)
			}
		}
	}
	if summary == nil {
		t.Fatalf("no run --once line:\n%s", res)
	}
	videos := queryInt(t, db, `SELECT count(*) FROM videos`)
	entries := queryInt(t, db, `SELECT count(*) FROM trending_entries`)
	if videos == entries {
		t.Fatalf("the fake's charts share no video (%d videos, %d entries): the test shows nothing", videos, entries)
	}
	if got := summary["videos"]; got != float64(videos) {
		t.Errorf("run --once logged videos=%v, the database holds %d videos", got, videos)
	}
	if got := summary["entries"]; got != float64(entries) {
		t.Errorf("run --once logged entries=%v, the database holds %d trending entries", got, entries)
	}
}

// While the limiter cannot be reached, the report's used and remaining come
// from the ledger, and the units spent unmetered are spent: the upstream
// charged them, so REMAINING is less by them (JSON and text alike).
func TestReportDuringOutageSubtractsUnmeteredUnits(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.withRedis().Stop()
	h.mustRun(0, "run", "--once", "--regions", "US")
	_, units := fullPassUnits(h.fake, "US")
	if got := queryInt(t, openDB(t, h.db()), `SELECT coalesce(sum(units), 0) FROM ledger WHERE pool = 'default' AND unmetered = 1`); got != units {
		t.Fatalf("ledger holds %d unmetered units, want %d: the outage did not happen as planned", got, units)
	}
	rep := h.report()
	used, limit, reserve, remaining, _, _ := rep.pool(t, "default")
	if rep.UsedFrom != "ledger" || used != units || remaining != limit-reserve-units {
		t.Errorf("report during the outage: used_from %q, used %d, remaining %d; want ledger, %d, %d (%d-%d-%d unmetered)",
			rep.UsedFrom, used, remaining, units, limit-reserve-units, limit, reserve, units)
	}
	text := h.mustRun(0, "report").stdout
	if got := poolColumn(text, "default", "REMAINING"); got != fmt.Sprint(limit-reserve-units) {
		t.Errorf("report text: REMAINING %q in the default pool's row, want %d:\n%s", got, limit-reserve-units, text)
	}
}

// poolColumn is one cell of the report's pool table, by the column's
// heading (headings of two words are one; "5 in 24h" is one cell).
func poolColumn(text, pool, column string) string {
	var heads []string
	for _, line := range strings.Split(text, "\n") {
		line = strings.NewReplacer("USED (WINDOW)", "USED_WINDOW", "USED TODAY", "USED_TODAY").Replace(line)
		f := strings.Fields(line)
		switch {
		case len(f) > 0 && f[0] == "POOL":
			heads = f
		case len(f) > 0 && f[0] == pool && heads != nil:
			f = append(f[:4], f[6:]...) // "5 in 24h" is one cell
			for i, h := range heads {
				if h == column && i < len(f) {
					return f[i]
				}
			}
		}
	}
	return ""
}

// check creates no database, gives a reason on every line it skips, and
// without YOUTUBE_API_KEY says so instead of asking the limiter about an
// empty quota key.
func TestCheckCreatesNothingAndSaysWhy(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	res := h.mustRun(0, "check")
	checkLines(t, res)
	for _, suffix := range []string{"", "-wal", "-shm", "-journal"} {
		if _, err := os.Stat(h.db() + suffix); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("check created %s (err %v):\n%s", h.db()+suffix, err, res)
		}
	}
	if h.fake.Requests() != 0 {
		t.Errorf("check called the upstream with no database to record the call in:\n%s", res)
	}
	if !regexp.MustCompile(`(?m)^skip +key +not called on a new host: .*check creates no database`).MatchString(res.stdout) {
		t.Errorf("check on a new host: want the key check skipped, saying why:\n%s", res)
	}

	h.unset("YOUTUBE_API_KEY")
	for _, args := range [][]string{{"check"}, {"check", "--offline"}} {
		res := h.mustRun(2, args...)
		checkLines(t, res)
		if strings.Contains(res.stdout, `quota key ""`) {
			t.Errorf("%v without a key asks about an empty quota key:\n%s", args, res)
		}
		if !regexp.MustCompile(`(?m)^skip +limiter +.*(YOUTUBE_API_KEY|INGEST_QUOTA_KEY)`).MatchString(res.stdout) ||
			!regexp.MustCompile(`(?m)^FAIL +settings +YOUTUBE_API_KEY is not set`).MatchString(res.stdout) {
			t.Errorf("%v without a key: want settings failed and the limiter skipped, naming YOUTUBE_API_KEY or INGEST_QUOTA_KEY:\n%s", args, res)
		}
	}
}

// checkLines checks that every line of check's table has a status, a
// name and something said: what was found, or why it was skipped.
func checkLines(t *testing.T, res result) {
	t.Helper()
	for _, line := range strings.Split(strings.TrimSpace(res.stdout), "\n") {
		if f := strings.Fields(line); len(f) < 3 {
			t.Errorf("check line %q says nothing after its name:\n%s", line, res)
		}
	}
}

// Every command's long help follows one wrapping rule: paragraphs filled
// to helpWidth, no line longer, none that had room for the next word.
func TestHelpTextIsWrappedByOneRule(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	seen := 0
	var walk func(path []string)
	walk = func(path []string) {
		res := h.mustRun(0, append(path, "--help")...)
		seen++
		long, _, _ := strings.Cut(res.stdout, "\nUsage:")
		lines := strings.Split(strings.TrimRight(long, "\n"), "\n")
		for i, line := range lines {
			n := utf8.RuneCountInString(line)
			if n > helpWidth {
				t.Errorf("ingest %s --help: line %d is %d wide, over %d: %q", strings.Join(path, " "), i+1, n, helpWidth, line)
			}
			if line == "" || line[0] == ' ' || i+1 == len(lines) || lines[i+1] == "" || lines[i+1][0] == ' ' {
				continue
			}
			next, _, _ := strings.Cut(lines[i+1], " ")
			if n+1+utf8.RuneCountInString(next) <= helpWidth {
				t.Errorf("ingest %s --help: line %d ends early (%q fits after %q)", strings.Join(path, " "), i+1, next, line)
			}
		}
		for _, section := range []string{"\nFlags:\n", "\nGlobal Flags:\n"} {
			_, flags, _ := strings.Cut(res.stdout, section)
			flags, _, _ = strings.Cut(flags, "\n\n")
			for _, line := range strings.Split(flags, "\n") {
				if n := utf8.RuneCountInString(line); n > helpWidth+2 {
					t.Errorf("ingest %s --help: a flag's line is %d wide, over %d: %q", strings.Join(path, " "), n, helpWidth+2, line)
				}
			}
		}
		for _, sub := range helpCommands(res.stdout) {
			walk(append(append([]string{}, path...), sub))
		}
	}
	walk(nil)
	if seen < 10 {
		t.Errorf("walked %d commands' help, want every command", seen)
	}
}

// helpCommands are the commands a --help lists under Available Commands,
// but help and completion, which cobra writes.
func helpCommands(help string) []string {
	_, list, ok := strings.Cut(help, "Available Commands:\n")
	if !ok {
		return nil
	}
	var out []string
	for _, line := range strings.Split(list, "\n") {
		f := strings.Fields(line)
		if len(f) == 0 || !strings.HasPrefix(line, "  ") {
			break
		}
		if f[0] != "help" && f[0] != "completion" {
			out = append(out, f[0])
		}
	}
	return out
}

// make build stamps the revision and the date, so that a build without
// VCS stamping (no .git, -buildvcs=false) still says what it is.
func TestMakeBuildStampsVersionWithoutVCS(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("make"); err != nil {
		t.Skip("make not installed")
	}
	rev, err := exec.Command("git", "rev-parse", "--short=12", "HEAD").Output()
	if err != nil {
		t.Skipf("not in a git checkout: %v", err)
	}
	bin := t.TempDir()
	cmd := exec.Command("make", "-C", "../..", "build", "BIN="+bin)
	cmd.Env = append(os.Environ(), "GOFLAGS=-buildvcs=false")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("make build: %v\n%s", err, out)
	}
	out, err := exec.Command(filepath.Join(bin, "ingest"), "version").Output()
	if err != nil {
		t.Fatalf("ingest version: %v", err)
	}
	want := strings.TrimSpace(string(rev))
	if !strings.Contains(string(out), "revision "+want) || !regexp.MustCompile(`built \d{4}-\d\d-\d\dT`).Match(out) {
		t.Errorf("ingest version of make build with -buildvcs=false: %q, want revision %s and a build date", out, want)
	}
}

// The image's one HEALTHCHECK (`ingest probe`, no URL) is healthy for
// serve on its default address and for run --listen alike.
func TestProbeFindsServeAndRunListeners(t *testing.T) {
	t.Parallel()
	df := string(fileBytes(t, "../../Dockerfile"))
	if !regexp.MustCompile(`(?m)^\s+CMD \["/usr/local/bin/ingest", "probe"\]`).MatchString(df) {
		t.Errorf("Dockerfile HEALTHCHECK is not `ingest probe` without a URL:\n%s", df)
	}
	h := newHarness(t)
	h.mustRun(0, "run", "--once", "--regions", "US")
	_, serveAddr := anyAddr(t)
	_, runAddr := anyAddr(t)
	h.set("INGEST_SERVE_LISTEN", serveAddr)
	h.set("INGEST_RUN_LISTEN", runAddr)
	h.mustRun(1, "probe", "--timeout", "5s") // nothing listens yet
	for _, args := range [][]string{{"serve"}, {"run", "--regions", "US"}} {
		p := h.start(args...)
		if !waitFor(60*time.Second, func() bool { return h.run("probe", "--timeout", "5s").code == 0 }) {
			t.Errorf("ingest probe never healthy while ingest %v runs:\n%s\n%s", args, h.run("probe"), p.out)
		}
		p.signal(t, syscall.SIGTERM)
		p.wait(30 * time.Second)
	}
}

// The help that speaks of the default regions names each of them, from the
// one list: ingest --help, and run --help for --regions.
func TestHelpNamesEveryDefaultRegion(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	for _, path := range [][]string{{"--help"}, {"run", "--help"}} {
		help := h.mustRun(0, path...).stdout
		for _, r := range regions.Default {
			if !regexp.MustCompile(`\b` + r + `\b`).MatchString(help) {
				t.Errorf("ingest %s does not name default region %s:\n%s", strings.Join(path, " "), r, help)
			}
		}
	}
}

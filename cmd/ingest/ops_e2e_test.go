package main

// End-to-end tests of issue 10 ("run it in production"): one test or more
// per numbered problem, each against the real binary.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/ingestworks/ingest/internal/envflag"
	"github.com/ingestworks/ingest/internal/fakeyt"
	"github.com/ingestworks/ingest/regions"
	"github.com/ingestworks/ingest/web"
)

// 1. The same open-ended backfill run again resumes: no search page is
// fetched twice (the fake upstream's request log says so), the searches
// keep one publishedBefore, and there is one cursor; --restart starts over.
func TestBackfillOpenEndedRerunFetchesNoPageTwice(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	// A page is a search (1 search unit) and its details (1 default unit).
	args := []string{"backfill", "--region", "US", "--since", "2025-11-01", "--max-units", "4"}
	h.mustRun(0, args...)
	time.Sleep(1200 * time.Millisecond) // the old key held "now" to the second
	second := h.mustRun(0, args...)
	if !strings.Contains(second.stdout, "resumed") {
		t.Errorf("the same command did not resume:\n%s", second)
	}
	searches := h.reqs.requests("/search")
	seen := map[string]int{}
	befores := map[string]bool{}
	for _, u := range searches {
		seen[u.Query().Get("pageToken")]++
		befores[u.Query().Get("publishedBefore")] = true
	}
	for tok, n := range seen {
		if n > 1 {
			t.Errorf("search page with token %q fetched %d times: paid twice", tok, n)
		}
	}
	if len(searches) != 4 || len(befores) != 1 {
		t.Errorf("%d searches with %d distinct publishedBefore; want 4 pages under one window", len(searches), len(befores))
	}
	if n := queryInt(t, openDB(t, h.db()), `SELECT count(*) FROM backfill_cursors`); n != 1 {
		t.Errorf("%d cursors after running one command twice, want 1", n)
	}
	list := h.mustRun(0, "backfill", "--list")
	if !strings.Contains(list.stdout, "open-ended") || !strings.Contains(list.stdout, "resumes at page 5") {
		t.Errorf("--list does not show the open-ended backfill at page 5:\n%s", list)
	}
	h.mustRun(0, append(args, "--restart", "--max-units", "2")...)
	if got := h.reqs.requests("/search"); len(got) != 5 || got[4].Query().Get("pageToken") != "" {
		t.Errorf("--restart did not fetch the first page again: %d searches", len(got))
	}
}

// 2. /metrics answers 200 with Redis stopped, and says the limiter is down;
// /healthz and /readyz answer JSON; promtool accepts the exposition.
func TestMetricsSurviveRedisDown(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	rs := h.withRedis()
	addr := closedAddr(t)
	p := h.start("run", "--every", "1h", "--regions", "US", "--listen", addr)
	base := "http://" + addr
	if !waitFor(60*time.Second, func() bool {
		return strings.Contains(httpGet(base+"/metrics"), `ingest_region_last_success_timestamp_seconds{region="US"}`)
	}) {
		t.Fatalf("US never succeeded within 60s\n%s", p.out)
	}
	code, body := get(t, base+"/readyz")
	if code != 200 || !json.Valid([]byte(body)) || !strings.Contains(body, `"ready"`) {
		t.Errorf("/readyz with everything up: %d %s", code, body)
	}
	rs.Stop()
	code, body = get(t, base+"/metrics")
	if code != 200 {
		t.Fatalf("/metrics with Redis stopped answered %d:\n%s", code, body)
	}
	for _, want := range []string{`ingest_limiter_up{backend="redis"} 0`, `ingest_build_info{`, `ingest_run_duration_seconds_bucket{`} {
		if !strings.Contains(body, want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
	promtoolCheck(t, body)
	code, body = get(t, base+"/healthz")
	if code != 200 || strings.TrimSpace(body) != "{\n  \"status\": \"ok\"\n}" {
		t.Errorf("/healthz: %d %q", code, body)
	}
	code, body = get(t, base+"/readyz")
	var rd web.ReadyState
	if err := json.Unmarshal([]byte(body), &rd); err != nil || code != 503 || rd.Status != "not ready" {
		t.Errorf("/readyz with Redis stopped: %d %s (%v); want 503 not ready", code, body, err)
	}
	p.signal(t, syscall.SIGTERM)
	if c, ok := p.wait(20 * time.Second); !ok || c != 0 {
		t.Errorf("daemon: exit %d, exited %v\n%s", c, ok, p.out)
	}
}

func get(t *testing.T, url string) (int, string) {
	t.Helper()
	c := &http.Client{Timeout: 10 * time.Second}
	res, err := c.Get(url)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(b)
}

// promtoolCheck runs `promtool check metrics` on an exposition when
// promtool is installed (Debian's prometheus package; make test installs
// it when it may).
func promtoolCheck(t *testing.T, body string) {
	t.Helper()
	path, err := exec.LookPath("promtool")
	if err != nil {
		t.Log("promtool not installed: exposition not linted (apt-get install prometheus)")
		return
	}
	cmd := exec.Command(path, "check", "metrics")
	cmd.Stdin = strings.NewReader(body)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Errorf("promtool check metrics: %v\n%s", err, out)
	}
}

// 3. Logs: run --once says one line at info; every JSON line parses with no
// key twice; durations are seconds; --log-level chooses.
func TestLogsAreQuietAndWellFormed(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	res := h.mustRun(0, "run", "--once", "--log-format", "json")
	lines := jsonLines(t, res.stderr)
	if len(lines) != 1 || lines[0]["msg"] != "run --once" || lines[0]["completed"] != float64(8) {
		t.Errorf("run --once at info: want one summary line, got %d:\n%s", len(lines), res.stderr)
	}
	res = h.mustRun(0, "run", "--once", "--log-format", "json", "--log-level", "debug", "--regions", "US")
	passes := 0
	for _, l := range jsonLines(t, res.stderr) {
		if l["msg"] != "pass" {
			continue
		}
		passes++
		d, ok := l["duration"].(float64)
		if !ok || d <= 0 || d > 120 {
			t.Errorf("pass duration %v: want seconds as a number", l["duration"])
		}
	}
	if passes != 1 {
		t.Errorf("--log-level debug: %d pass lines, want 1:\n%s", passes, res.stderr)
	}
	h.set("INGEST_LOG_LEVEL", "loud")
	if res := h.run("run", "--once"); res.code != 2 || !strings.Contains(res.stderr, "INGEST_LOG_LEVEL") {
		t.Errorf("bad INGEST_LOG_LEVEL: want exit 2 naming it, got %s", res)
	}
}

// jsonLines parses every stderr line as one JSON object, failing on a key
// that appears twice (encoding/json would keep the last silently).
func jsonLines(t *testing.T, stderr string) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(stderr), "\n") {
		if line == "" {
			continue
		}
		if err := noDuplicateKeys(line); err != nil {
			t.Errorf("log line %s: %v", line, err)
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Errorf("log line is not JSON: %q", line)
			continue
		}
		out = append(out, m)
	}
	return out
}

func noDuplicateKeys(line string) error {
	dec := json.NewDecoder(strings.NewReader(line))
	var walk func() error
	walk = func() error {
		tok, err := dec.Token()
		if err != nil {
			return err
		}
		switch tok {
		case json.Delim('{'):
			keys := map[string]bool{}
			for dec.More() {
				k, err := dec.Token()
				if err != nil {
					return err
				}
				if keys[k.(string)] {
					return fmt.Errorf("key %q twice", k)
				}
				keys[k.(string)] = true
				if err := walk(); err != nil {
					return err
				}
			}
			_, err = dec.Token()
		case json.Delim('['):
			for dec.More() {
				if err := walk(); err != nil {
					return err
				}
			}
			_, err = dec.Token()
		}
		return err
	}
	return walk()
}

// 4a. Every flag of every command has an environment variable, listed in
// its --help, and the variable works.
func TestEveryFlagHasAnEnvVar(t *testing.T) {
	t.Parallel()
	var walk func(cmd *cobra.Command)
	walk = func(cmd *cobra.Command) {
		cmd.InitDefaultHelpFlag()
		cmd.Flags().VisitAll(func(f *pflag.Flag) {
			if f.Name == "help" || f.Name == "version" {
				return
			}
			env := f.Annotations[envflag.Annotation] // its name, then any older one
			if len(env) == 0 || !strings.Contains(f.Usage, "[$"+env[0]+"]") {
				t.Errorf("%s --%s: no environment variable in its help (%q)", cmd.CommandPath(), f.Name, f.Usage)
			}
		})
		for _, c := range cmd.Commands() {
			walk(c)
		}
	}
	walk(newRoot())
	h := newHarness(t)
	h.set("INGEST_RUN_REGIONS", "US,XX")
	if res := h.run("run", "--once"); res.code != 2 || !strings.Contains(res.stderr, "XX") {
		t.Errorf("INGEST_RUN_REGIONS=US,XX: want exit 2 naming XX, got %s", res)
	}
	help := h.mustRun(0, "backfill", "--help")
	if !strings.Contains(help.stdout, "[$INGEST_BACKFILL_SINCE]") {
		t.Errorf("backfill --help does not list INGEST_BACKFILL_SINCE:\n%s", help.stdout)
	}
}

// 4b. A schedule that cannot fit is said at start, and refused with
// --strict before anything is opened.
func TestRunPlanWarnsOrRefuses(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	res := h.run("run", "--every", "1m", "--strict")
	if res.code != 2 || !strings.Contains(res.stderr, "cannot fit") || !strings.Contains(res.stderr, "default") {
		t.Errorf("--every 1m --strict: want exit 2 saying it cannot fit, got %s", res)
	}
	if _, err := os.Stat(h.db()); err == nil {
		t.Errorf("--strict refusal created the database")
	}
	res = h.mustRun(0, "run", "--once", "--every", "1m")
	if !strings.Contains(res.stderr, "cannot fit") {
		t.Errorf("run --once --every 1m: no warning that the schedule cannot fit:\n%s", res)
	}
}

// 4c. A dead endpoint fails the run at the first region, with one line
// that says so; a rejected key counts the regions right.
func TestDeadEndpointFailsFast(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.set("YOUTUBE_ENDPOINT", "http://"+closedAddr(t)+"/")
	start := time.Now()
	res := h.mustRun(1, "run", "--once")
	took := time.Since(start)
	notRun := fmt.Sprintf("%d of %d regions not run", len(regions.Default)-1, len(regions.Default))
	if n := strings.Count(res.stderr, "ingest: "); n != 1 || !strings.Contains(res.stderr, "cannot be reached") ||
		!strings.Contains(res.stderr, notRun) || !strings.Contains(res.stderr, "YOUTUBE_ENDPOINT") {
		t.Errorf("dead endpoint: want one line saying it cannot be reached and %s:\n%s", notRun, res.stderr)
	}
	if took > 15*time.Second {
		t.Errorf("dead endpoint took %s; want the first region's retries only", took)
	}
	if runs := runRows(t, openDB(t, h.db())); len(runs) != 1 {
		t.Errorf("%d runs after a dead endpoint, want 1 (the first region)", len(runs))
	}
	// The upstream charged nothing: every attempt was given back, and the
	// ledger's count and the limiter's window say so.
	db := openDB(t, h.db())
	if given, calls := queryInt(t, db, `SELECT count(*) FROM ledger_given_back`), queryInt(t, db, `SELECT count(DISTINCT call_id) FROM ledger`); given == 0 || given != calls {
		t.Errorf("dead endpoint: %d calls in the ledger, %d given back; want every one given back", calls, given)
	}
	if used, _, _, _, _, _ := h.report().pool(t, "default"); used != 0 {
		t.Errorf("dead endpoint: the limiter counts %d units used, want 0 (nothing reached the upstream)", used)
	}
	h2 := newHarness(t)
	h2.fake.BadKey(fakeyt.KeyInvalid)
	res = h2.mustRun(1, "run", "--once")
	n := len(regions.Default)
	if !strings.Contains(res.stderr, fmt.Sprintf("%d of %d regions not run", n-1, n)) || strings.Contains(res.stderr, "1 of 1") {
		t.Errorf("bad key: want every default region counted:\n%s", res.stderr)
	}
}

// 5. The report tells the truth: skipped and interrupted, short notes, a
// legend, the daemon's schedule.
func TestReportStatusesNotesAndSchedule(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.fake.NoChart("GB")
	h.fake.FailNext(4, 500)
	h.mustRun(1, "run", "--once", "--regions", "US,GB,DE")
	rep := h.report()
	status := map[string]string{}
	for _, r := range rep.Regions {
		status[r.Code] = r.Status
	}
	if status["GB"] != "skipped" || status["US"] != "failed" || status["DE"] != "completed" {
		t.Errorf("statuses %v: want GB skipped, US failed, DE completed", status)
	}
	text := h.mustRun(0, "report").stdout
	usLine := regexp.MustCompile(`(?m)^US .*$`).FindString(text)
	if strings.Contains(usLine, "http://") || len(usLine) > 160 {
		t.Errorf("US note is not shortened to its reason: %q", usLine)
	}
	if !strings.Contains(text, "skipped: the upstream has no chart there") {
		t.Errorf("report has no status legend:\n%s", text)
	}

	p := h.start("run", "--every", "2h", "--regions", "DE")
	if !waitFor(30*time.Second, func() bool {
		var n int64
		db := openDB(t, h.db())
		_ = db.QueryRow(`SELECT count(*) FROM schedule`).Scan(&n)
		return n == 1
	}) {
		t.Fatalf("the daemon recorded no schedule\n%s", p.out)
	}
	p.signal(t, syscall.SIGTERM)
	p.wait(20 * time.Second)
	var raw struct {
		Schedule string `json:"schedule"`
		Plan     []struct {
			RunsPerDay float64 `json:"runs_per_day"`
			Regions    int     `json:"regions"`
		} `json:"plan"`
	}
	if err := json.Unmarshal([]byte(h.mustRun(0, "report", "--json").stdout), &raw); err != nil || len(raw.Plan) == 0 ||
		raw.Plan[0].RunsPerDay != 12 || raw.Plan[0].Regions != 1 || raw.Schedule != "the daemon's" {
		t.Errorf("report plan %+v (%v): want the daemon's 2h schedule of one region (12 runs a day)", raw, err)
	}

	// With a category, the daemon staggers two charts, DE and DE/10, in
	// its 2 hours (a slot per default region at least: DE/10 takes the
	// second, 2h/n after DE's): the report's next runs are that schedule's, and its plan
	// still counts one region.
	p = h.start("run", "--every", "2h", "--regions", "DE", "--categories", "music")
	if !waitFor(30*time.Second, func() bool {
		var regions string
		_ = openDB(t, h.db()).QueryRow(`SELECT regions FROM schedule`).Scan(&regions)
		return regions == "DE,DE/10"
	}) {
		t.Fatalf("the daemon did not record its two charts\n%s", p.out)
	}
	p.signal(t, syscall.SIGTERM)
	p.wait(20 * time.Second)
	next := map[string]time.Time{}
	for _, r := range h.report().Regions {
		if r.NextRun != nil {
			next[r.Code], _ = time.Parse(time.RFC3339, *r.NextRun)
		}
	}
	d := next["DE/10"].Sub(next["DE"]) % (2 * time.Hour)
	if d < 0 {
		d += 2 * time.Hour
	}
	if slot := 2 * time.Hour / time.Duration(len(regions.Default)); len(next) != 2 || d != slot {
		t.Errorf("next runs %v: want DE and DE/10 in slots %s apart (the daemon's stagger of two charts over 2h)", next, slot)
	}
	if err := json.Unmarshal([]byte(h.mustRun(0, "report", "--json").stdout), &raw); err != nil || len(raw.Plan) == 0 || raw.Plan[0].Regions != 1 {
		t.Errorf("report plan %+v (%v): want one region", raw, err)
	}
}

// 5b. A pass stopped by SIGTERM between pages is interrupted, not
// completed.
func TestInterruptedPassIsReportedSo(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.fake.SetLatency(300 * time.Millisecond)
	p := h.start("run", "--once", "--regions", "US")
	if !waitFor(60*time.Second, func() bool { return trendingEntries(h.db()) >= 50 }) {
		t.Fatalf("no page stored within 60s\n%s", p.out)
	}
	p.signal(t, syscall.SIGTERM)
	if code, ok := p.wait(20 * time.Second); !ok || code != 0 {
		t.Fatalf("exit %d (exited %v) after SIGTERM\n%s", code, ok, p.out)
	}
	if us := lastRunsAll(t, h, "US"); us.Status != "interrupted" || us.Pages >= 4 {
		t.Errorf("US run %+v: want interrupted before its 4 pages", us)
	}
}

// 5c. report on a host with no database: the pools come from Redis, which
// knows what another host spent, and no file is created.
func TestReportWithoutADatabaseAsksTheLimiter(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.withRedis()
	h.mustRun(0, "run", "--once", "--regions", "US")
	h.set("INGEST_DB", filepath.Join(h.dir, "elsewhere.db"))
	rep := h.report()
	if used, _, _, _, _, _ := rep.pool(t, "default"); used != 5 {
		t.Errorf("report without a database: default used %d, want the 5 units the other host spent", used)
	}
	if _, err := os.Stat(h.db()); err == nil {
		t.Errorf("report created %s", h.db())
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
	copyFile(t, ingestBin, bin, 0o755)
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

func rep(h *harness) reportOut { return h.report() }

func copyFile(t *testing.T, from, to string, mode os.FileMode) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, mode); err != nil {
		t.Fatal(err)
	}
}

// 7. check and version.
func TestCheckAndVersion(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	res := h.mustRun(0, "check", "--offline")
	for _, name := range []string{"settings", "costs", "database", "limiter", "key"} {
		if !regexp.MustCompile(`(?m)^(ok|skip) +` + name + `\b`).MatchString(res.stdout) {
			t.Errorf("check --offline does not report %s:\n%s", name, res.stdout)
		}
	}
	if h.fake.Requests() != 0 {
		t.Errorf("check --offline called the upstream")
	}
	h.mustRun(0, "run", "--once", "--regions", "US") // check creates no database: the key is checked on one
	charged, ledger := h.fake.Charged(testKey), ledgerUnits(t, h.db(), "default")
	res = h.mustRun(0, "check")
	if !regexp.MustCompile(`(?m)^ok +key +accepted`).MatchString(res.stdout) || h.fake.Charged(testKey) != charged+1 ||
		ledgerUnits(t, h.db(), "default") != ledger+1 {
		t.Errorf("check: want the key accepted with one unit charged and in the ledger; charged %d\n%s", h.fake.Charged(testKey)-charged, res)
	}
	h.withRedis().Stop()
	res = h.mustRun(1, "check", "--offline")
	if !regexp.MustCompile(`(?m)^FAIL +limiter`).MatchString(res.stdout) {
		t.Errorf("check with Redis stopped does not fail the limiter:\n%s", res)
	}
	for _, args := range [][]string{{"version"}, {"--version"}} {
		if out := h.mustRun(0, args...).stdout; !strings.HasPrefix(out, "ingest ") {
			t.Errorf("%v: %q", args, out)
		}
	}
}

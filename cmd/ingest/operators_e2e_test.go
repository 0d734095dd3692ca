package main

// End-to-end tests of what an operator reads: help that tells the truth,
// errors that name the fix.

import (
	"encoding/json"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ingestworks/ingest/internal/pgtest"
)

// backfill --help prices a page as the shipped costs.yaml does, the same
// words --dry-run prints for a page.
func TestBackfillHelpPricesAPageAsDryRun(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	plan := h.mustRun(0, "backfill", "--region", "US", "--since", "2026-01-01", "--dry-run")
	m := regexp.MustCompile(`\(a page: ([^)]+)\)`).FindStringSubmatch(plan.stdout)
	if m == nil {
		t.Fatalf("--dry-run prints no page cost:\n%s", plan)
	}
	help := h.mustRun(0, "backfill", "--help")
	text := strings.Join(strings.Fields(help.stdout), " ")
	if !strings.Contains(text, m[1]) || strings.Contains(text, "100 units") {
		t.Errorf("backfill --help does not price a page as --dry-run does (%q):\n%s", m[1], help.stdout)
	}
}

// run --once --every prints the plan at the default level, as run --help,
// docs/operations.md and ingest-once.service say.
func TestRunOnceEveryPrintsThePlan(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	res := h.mustRun(0, "run", "--once", "--every", "1h", "--regions", "US", "--log-format", "json")
	pools := map[any]bool{}
	for _, l := range jsonLines(t, res.stderr) {
		if l["msg"] == "plan" {
			pools[l["pool"]] = true
		}
	}
	if !pools["default"] {
		t.Errorf("run --once --every 1h: no plan line for the default pool at info:\n%s", res.stderr)
	}
}

// tokens add and tokens list read their flags from the documented names,
// and still from the names they had before.
func TestTokensReadTheirVariables(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.set("INGEST_TOKENS_ADD_PLAN", "standard")
	h.mustRun(0, "tokens", "add", "acme")
	h.unset("INGEST_TOKENS_ADD_PLAN")
	h.set("INGEST_ADD_PLAN", "standard")
	h.mustRun(0, "tokens", "add", "bolt")
	h.set("INGEST_TOKENS_LIST_JSON", "true")
	res := h.mustRun(0, "tokens", "list")
	var list []map[string]any
	if err := json.Unmarshal([]byte(res.stdout), &list); err != nil || len(list) != 2 {
		t.Errorf("INGEST_TOKENS_LIST_JSON=true: want a JSON array of two tokens, got %v\n%s", err, res)
	}
}

// A database that cannot be used is a configuration error (exit 2) in one
// line naming --db / INGEST_DB, the file or URL, and the fix, never the
// driver's own words: a damaged SQLite file, a path SQLite cannot open,
// a PostgreSQL database that does not exist, a password with a bare @.
func TestDatabaseErrorsSayTheFix(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.mustRun(0, "run", "--once", "--regions", "US")
	damaged := filepath.Join(h.dir, "damaged.db")
	copyFile(t, h.db(), damaged, 0o644)
	if err := os.Truncate(damaged, 8192); err != nil {
		t.Fatal(err)
	}
	pg, err := url.Parse(pgtest.URL(t))
	if err != nil {
		t.Fatal(err)
	}
	missing := *pg
	missing.Path = "/no_such_db"
	at := "postgres://" + pg.User.Username() + ":p@ss@" + pg.Host + pg.Path
	for _, tc := range []struct {
		name, db string
		args     []string
		want     []string
	}{
		{"damaged: run", damaged, []string{"run", "--once", "--regions", "US"}, []string{damaged, "damaged", "backup"}},
		{"damaged: report", damaged, []string{"report"}, []string{damaged, "damaged", "backup"}},
		{"damaged: search", damaged, []string{"search", "x"}, []string{damaged, "damaged", "backup"}},
		{"cannot open", "/proc/nope.db", []string{"run", "--once", "--regions", "US"}, []string{"/proc/nope.db", "cannot be opened", "another path"}},
		{"no such PostgreSQL database", missing.String(), []string{"run", "--once", "--regions", "US"}, []string{"no_such_db", "does not exist", "CREATE DATABASE"}},
		{"a bare @ in the password", at, []string{"report"}, []string{"%40", "percent-encode"}},
	} {
		h.set("INGEST_DB", tc.db)
		r := h.run(tc.args...)
		lines := strings.Split(strings.TrimSpace(r.stderr), "\n")
		ok := r.code == 2 && len(lines) == 1 && strings.Contains(lines[0], "INGEST_DB")
		for _, w := range tc.want {
			ok = ok && strings.Contains(lines[0], w)
		}
		if !ok {
			t.Errorf("%s: want exit 2 and one line naming INGEST_DB and %q, got %s", tc.name, tc.want, r)
		}
		if raw := regexp.MustCompile(`\(\d+\)|unable to open|malformed|SQLSTATE|no such host|p@ss`).FindString(r.stderr); raw != "" {
			t.Errorf("%s: the driver's own words or the password (%q) reach the user: %s", tc.name, raw, r.stderr)
		}
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

// A token whose plan was taken out of the plans file: serve warns at its
// start, tokens list shows it unusable, and its 401 says why.
func TestTokenOfARemovedPlan(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.mustRun(0, "run", "--once", "--regions", "US")
	before := filepath.Join(h.dir, "plans-before.yaml")
	after := filepath.Join(h.dir, "plans-after.yaml")
	writeFile(t, before, "plans:\n  anonymous: {limit: 10, window: 1h}\n  gold: {limit: 10, window: 1h}\n  silver: {limit: 10, window: 1h}\n")
	writeFile(t, after, "plans:\n  anonymous: {limit: 10, window: 1h}\n  silver: {limit: 10, window: 1h}\n")
	h.set("INGEST_API_PLANS", before)
	tok := lastLine(h.mustRun(0, "tokens", "add", "acme", "--plan", "gold").stdout)
	h.mustRun(0, "tokens", "add", "bolt", "--plan", "silver")
	h.set("INGEST_API_PLANS", after)

	list := h.mustRun(0, "tokens", "list")
	if !regexp.MustCompile(`(?m)^acme\s+gold\s+no: plan not in `).MatchString(list.stdout) ||
		!regexp.MustCompile(`(?m)^bolt\s+silver\s+yes\s`).MatchString(list.stdout) {
		t.Errorf("tokens list: want acme unusable and bolt usable:\n%s", list)
	}
	var listed []struct {
		Name   string `json:"name"`
		Usable bool   `json:"usable"`
	}
	js := h.mustRun(0, "tokens", "list", "--json")
	if err := json.Unmarshal([]byte(js.stdout), &listed); err != nil || len(listed) != 2 || listed[0].Usable || !listed[1].Usable {
		t.Errorf("tokens list --json: want acme usable false, bolt true; got %+v (%v)\n%s", listed, err, js)
	}

	addr := closedAddr(t)
	p := h.start("serve", "--listen", addr)
	base := "http://" + addr
	if !waitFor(30*time.Second, func() bool { return apiGetOK(base + "/healthz") }) {
		t.Fatalf("ingest serve never answered on %s\n%s", addr, p.out)
	}
	a := apiGet(t, base, "/api/v1/charts/US", tok, "")
	if a.code != 401 || !strings.Contains(a.body, `\"gold\" is not in this server's plans file`) {
		t.Errorf("a token of a removed plan: want 401 saying its plan is not in the plans file, got %d %s", a.code, a.body)
	}
	warned := false
	for _, line := range strings.Split(p.out.String(), "\n") {
		warned = warned || (strings.Contains(line, "WARN") && strings.Contains(line, "token=acme") && strings.Contains(line, "plan=gold"))
	}
	if !warned {
		t.Errorf("serve did not warn at start about acme's plan gold:\n%s", p.out)
	}
}

func writeFile(t *testing.T, path, body string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}

func apiGetOK(u string) bool {
	res, err := http.Get(u)
	if err != nil {
		return false
	}
	res.Body.Close()
	return res.StatusCode == 200
}

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

// serve on a database file it cannot write, without REDIS_URL, serves it
// read-only (the API's limiter lives in the process on SQLite), as
// docs/api.md says.
func TestServeOnAReadOnlyFileServesIt(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.mustRun(0, "run", "--once", "--regions", "US")
	dir, err := os.MkdirTemp("", "ingest-serve-ro-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	bin, db := filepath.Join(dir, "ingest"), filepath.Join(dir, "ro.db")
	copyFile(t, ingestBin, bin, 0o755)
	copyFile(t, h.db(), db, 0o444)
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	addr := closedAddr(t)
	var out lockedBuffer
	cmd := exec.Command(bin, "serve", "--listen", addr)
	cmd.Env = scratchEnv("INGEST_DB="+db, "YOUTUBE_API_KEY="+testKey)
	cmd.Stdout, cmd.Stderr = &out, &out
	if os.Getuid() == 0 {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	if !waitFor(20*time.Second, func() bool { return apiGetOK("http://" + addr + "/api/v1/runs") }) {
		t.Fatalf("serve on a read-only file without REDIS_URL: /api/v1/runs never answered 200:\n%s", out.String())
	}
}

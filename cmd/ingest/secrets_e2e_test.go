package main

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ingestworks/ingest/internal/rig/fakeyt"
)

// 6. The API key is never printed, logged, stored or used in Redis.
func TestAPIKeyNeverLeaks(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	rs := h.withRedis()
	var outputs []result
	run := func(want int, args ...string) {
		t.Helper()
		outputs = append(outputs, h.mustRun(want, args...))
	}
	run(0, "run", "--once", "--regions", "US,GB")
	run(0, "run", "--once", "--regions", "AU", "--log-format", "json")
	run(0, "backfill", "--region", "US", "--since", "2026-10-01", "--until", "2026-11-01", "--max-units", "202")
	run(0, "backfill", "--region", "US", "--since", "2026-10-01", "--until", "2026-11-01", "--dry-run")
	run(0, "report")
	run(0, "report", "--json")
	run(0, "search", "football")
	run(0, "search", "--json", "football")

	// Error paths: a rejected key, an unreachable upstream.
	h.fake.BadKey(fakeyt.KeyInvalid)
	run(1, "run", "--once", "--regions", "DE")
	run(1, "run", "--once", "--regions", "DE", "--log-format", "json")
	run(1, "backfill", "--region", "DE", "--since", "2026-10-01", "--until", "2026-11-01")
	h.fake.BadKey(fakeyt.KeyOK)
	h.set("YOUTUBE_ENDPOINT", "http://"+closedAddr(t)+"/")
	run(1, "run", "--once", "--regions", "FR")
	run(1, "backfill", "--region", "FR", "--since", "2026-10-01", "--until", "2026-11-01")

	// And the embedded limiter's tables, in a database of their own.
	h.set("YOUTUBE_ENDPOINT", h.srv.URL+"/")
	h.unset("REDIS_URL")
	h.set("INGEST_DB", filepath.Join(h.dir, "embedded.db"))
	run(0, "run", "--once", "--regions", "CA")
	run(0, "report", "--json")

	// The daemon's /metrics, /quota and /healthz.
	listen := closedAddr(t)
	d := h.start("run", "--every", "1m", "--regions", "BR", "--listen", listen)
	served := ""
	if !waitFor(30*time.Second, func() bool { return siteServed("http://" + listen) }) {
		t.Errorf("daemon --listen %s: /healthz never answered\n%s", listen, d.out)
	}
	waitFor(30*time.Second, func() bool { return trendingEntries(h.db()) >= int64(h.fake.ChartLength("BR")) })
	for _, path := range []string{"/metrics", "/quota", "/healthz"} {
		body := httpGet("http://" + listen + path)
		if body == "" {
			t.Errorf("daemon %s answered nothing", path)
		}
		served += body
	}
	d.signal(t, syscall.SIGTERM)
	if _, ok := d.wait(10 * time.Second); !ok {
		t.Errorf("daemon still running 10s after SIGTERM")
	}
	if strings.Contains(served, testKey) || strings.Contains(d.out.String(), testKey) {
		t.Errorf("the API key appears in what the daemon served or logged:\n%s\n%s", served, d.out)
	}

	for _, res := range outputs {
		if strings.Contains(res.stdout+res.stderr, testKey) {
			t.Errorf("the API key appears in the output of %s", res)
		}
	}
	files, _ := filepath.Glob(filepath.Join(h.dir, "*"))
	for _, f := range files {
		if b := fileBytes(t, f); bytes.Contains(b, []byte(testKey)) {
			t.Errorf("the API key is stored in %s", filepath.Base(f))
		}
	}
	dump := redisDump(t, rs.Addr)
	if len(dump) == 0 {
		t.Error("Redis holds no keys after runs that used it")
	}
	for k, v := range dump {
		if strings.Contains(k, testKey) || strings.Contains(v, testKey) {
			t.Errorf("the API key is in Redis key %q (value %.200s)", k, v)
		}
	}
}

// A --db or REDIS_URL shaped as a URL whose scheme is misspelt, in
// capitals, short of a slash or another database's is exit 2 for every
// command that opens one, naming the schemes taken, with no part of the
// password and never read as a SQLite file that is not there yet.
func TestAMistypedURLNeverPrintsItsPassword(t *testing.T) {
	t.Parallel()
	dbURLs := []string{
		"Postgres://u:" + leakedSecret + "@127.0.0.1:1/db",
		"POSTGRESQL://u:" + leakedSecret + "@127.0.0.1:1/db",
		"postgres:/u:" + leakedSecret + "@127.0.0.1:1/db",
		"postgres:u:" + leakedSecret + "@127.0.0.1:1/db",
		"postgress://u:" + leakedSecret + "@127.0.0.1:1/db",
		"pg://u:" + leakedSecret + "@127.0.0.1:1/db",
		"mysql://u:" + leakedSecret + "@127.0.0.1:1/db",
		"sqlite://u:" + leakedSecret + "@127.0.0.1:1/db",
		"pg://" + leakedSecret + "@127.0.0.1:1/db",
	}
	redisURLs := []string{
		"Redis://:" + leakedSecret + "@127.0.0.1:1/0",
		"redis:/:" + leakedSecret + "@127.0.0.1:1/0",
		"redis:" + leakedSecret + "@127.0.0.1:1/0",
		"rediss:/" + leakedSecret + "@127.0.0.1:1/0",
		"reddis://" + leakedSecret + "@127.0.0.1:1/0",
		"redis:/:x://" + leakedSecret + "@127.0.0.1:1/0",
		"tcp://:" + leakedSecret + "@127.0.0.1:1/0",
	}
	h := newHarness(t)
	check := func(res result, want string) {
		t.Helper()
		out := res.stdout + res.stderr
		switch {
		case strings.Contains(out, leakedSecret[:4]) || strings.Contains(out, leakedSecret[4:]):
			t.Errorf("a piece of the password is printed: %s", res)
		case res.code != 2 || !strings.Contains(out, want):
			t.Errorf("want exit 2 naming %q, got %s", want, res)
		case strings.Contains(out, "no database"):
			t.Errorf("the URL taken for a SQLite path: %s", res)
		}
	}
	for _, u := range dbURLs {
		h.set("INGEST_DB", u)
		for _, args := range dbCommands {
			check(h.run(args...), "postgres:// or postgresql://")
		}
	}
	h.set("INGEST_DB", "host=127.0.0.1 port=1 user=u password="+leakedSecret+" dbname=db")
	for _, args := range dbCommands {
		check(h.run(args...), "postgres://USER:PASSWORD@HOST")
	}
	h.set("INGEST_DB", h.dir+"/ingest.db")
	h.withRedis()
	for _, u := range dbURLs {
		check(h.run("quota", "restore", "--ledger", u), "postgres:// or postgresql://")
		check(h.run("quota", "apply", h.newFlag(), "--ledger", u), "postgres:// or postgresql://")
		// --new without its key takes --ledger for it, and the URL is left
		// over as an unknown command: the parser's words keep it masked.
		check(h.run("quota", "apply", "--new", "--ledger", u), "unknown command")
	}
	for _, u := range redisURLs {
		h.set("REDIS_URL", u)
		for _, args := range dbCommands {
			if !usesRedis(t, args) {
				continue
			}
			check(h.run(args...), "redis://")
		}
	}
}

// leakedSecret is the password of every mistyped URL below: no output may
// hold any of it.
const leakedSecret = "S3cr3tPg"

// dbCommands are the commands that open the database, each with the
// arguments it needs to get that far.
var dbCommands = [][]string{
	{"run", "--once", "--regions", "US"},
	{"backfill", "--region", "US", "--since", "2026-01-01", "--until", "2026-01-02"},
	{"report"},
	{"search", "music"},
	{"export", "--since", "2026-01-01", "--out", "-"},
	{"history", "dQw4w9WgXcQ"},
	{"chart", "US"},
	{"prune", "--dry-run"},
	{"check"},
	{"check", "--offline"},
	{"quota", "show"},
	{"serve", "--listen", "127.0.0.1:0"},
	{"tokens", "list"},
}

// usesRedis says whether the command of args takes --redis.
func usesRedis(t *testing.T, args []string) bool {
	t.Helper()
	cmd, _, err := newRoot().Find(args)
	if err != nil {
		t.Fatalf("ingest %s: %v", strings.Join(args, " "), err)
	}
	return slices.Contains(usesOf(cmd), useRedis)
}

// YOUTUBE_ENDPOINT's password is masked as the database's and Redis's are:
// in check's settings line, in the unreachable upstream's line of check
// and of a run, and in the usage error of an endpoint given with
// youtube/v3/.
func TestEndpointPasswordIsMasked(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	reachable := strings.Replace(h.srv.URL, "http://", "http://u:"+leakedSecret+"@", 1) + "/"
	unreachable := "http://u:" + leakedSecret + "@" + closedAddr(t) + "/"
	for _, tc := range []struct {
		endpoint string
		args     []string
		code     int
		want     string
	}{
		{reachable, []string{"check"}, 0, "endpoint http://u:xxxxx@"},
		{unreachable, []string{"check"}, 1, "cannot be reached"},
		{unreachable, []string{"run", "--once", "--regions", "US"}, 1, "cannot be reached"},
		{reachable + "youtube/v3/", []string{"check"}, 2, "without youtube/v3/"},
	} {
		h.set("YOUTUBE_ENDPOINT", tc.endpoint)
		res := h.run(tc.args...)
		out := res.stdout + res.stderr
		if strings.Contains(out, leakedSecret[:4]) || strings.Contains(out, leakedSecret[4:]) {
			t.Errorf("a piece of the endpoint's password is printed: %s", res)
		}
		if res.code != tc.code || !strings.Contains(out, tc.want) {
			t.Errorf("want exit %d saying %q, got %s", tc.code, tc.want, res)
		}
	}
}

// A setting that can hold a secret, written in any malformed shape (no
// scheme, a scheme without its colon or with one slash, a key in the
// query), prints no piece of the secret in check, run --once or report,
// stdout or stderr; a run refuses it with exit 2 naming the setting, and
// a --db that lost its URL's colon is never taken for a SQLite path.
func TestAMalformedSettingNeverPrintsItsSecret(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	good := map[string]string{"YOUTUBE_ENDPOINT": h.env["YOUTUBE_ENDPOINT"], "INGEST_DB": h.db()}
	s := leakedSecret
	for _, tc := range []struct {
		env, value string
		refused    bool // exit 2 naming env for check and run --once
	}{
		{"YOUTUBE_ENDPOINT", "user:" + s + "@127.0.0.1:1", true},
		{"YOUTUBE_ENDPOINT", "http//u:" + s + "@127.0.0.1:1/", true},
		{"YOUTUBE_ENDPOINT", "http:/u:" + s + "@127.0.0.1:1/", true},
		{"YOUTUBE_ENDPOINT", "http:u:" + s + "@127.0.0.1:1/", true},
		{"YOUTUBE_ENDPOINT", "http://127.0.0.1:1/?key=" + s, true},
		{"YOUTUBE_ENDPOINT", h.srv.URL + "/?a=b&key=" + s + "#f", true},
		{"YOUTUBE_ENDPOINT", "http://u:" + s + "@127.0.0.1:1/?key=" + s, true},
		{"INGEST_DB", "postgres//u:" + s + "@127.0.0.1:1/db", true},
		{"INGEST_DB", "postgresql//u:" + s + "@127.0.0.1:1/db", true},
		{"INGEST_DB", "http//u:" + s + "@127.0.0.1:1/db", true},
		{"INGEST_DB", "user:" + s + "@127.0.0.1:1/db", true},
		{"INGEST_DB", "postgres://u@127.0.0.1:1/db?sslmode=disable&password=" + s, false},
		{"INGEST_DB", "postgres://127.0.0.1:1/db?sslmode=disable&key=" + s, false},
		{"REDIS_URL", "redis//:" + s + "@127.0.0.1:1/0", true},
		{"REDIS_URL", "user:" + s + "@127.0.0.1:1", true},
		{"REDIS_URL", "redis://127.0.0.1:1/0?key=" + s, true},
		{"REDIS_URL", "redis://127.0.0.1:1/0?password=" + s, false},
	} {
		h.set(tc.env, tc.value)
		for _, args := range [][]string{{"check"}, {"run", "--once", "--regions", "US"}, {"report"}} {
			res := h.run(args...)
			out := res.stdout + res.stderr
			if strings.Contains(out, s[:4]) || strings.Contains(out, s[4:]) {
				t.Errorf("%s=%s: a piece of the secret is printed: %s", tc.env, tc.value, res)
			}
			if tc.refused && args[0] != "report" && (res.code != 2 || !strings.Contains(out, tc.env)) {
				t.Errorf("%s=%s: want exit 2 naming %s, got %s", tc.env, tc.value, tc.env, res)
			}
		}
		if v, ok := good[tc.env]; ok {
			h.set(tc.env, v)
		} else {
			h.unset(tc.env)
		}
	}
	if _, err := os.Stat(filepath.Join(h.dir, "postgres")); err == nil {
		t.Errorf("a --db that lost its URL's colon was created as a SQLite path under %s", h.dir)
	}
	for _, tc := range []string{"https://u:" + s + "@h.example/", "https//u:" + s + "@h.example/", "https://h.example/?key=" + s} {
		res := h.run("run", "--once", "--regions", "US", "--public-url", tc)
		out := res.stdout + res.stderr
		if strings.Contains(out, s[:4]) || strings.Contains(out, s[4:]) || res.code != 2 || !strings.Contains(out, "public-url") {
			t.Errorf("--public-url %s: want exit 2 naming it, no piece of the secret: %s", tc, res)
		}
	}
}

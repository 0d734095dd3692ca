package main

// End-to-end tests of what an operator reads, fourth pass: no password in
// any output, errors that name their fix, listeners and daemons that say
// where they listen and when they stop.

import (
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
)

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
	h.set("INGEST_DB", h.dir+"/ingest.db")
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

// usesRedis says whether the command of args takes --redis.
func usesRedis(t *testing.T, args []string) bool {
	t.Helper()
	cmd, _, err := newRoot().Find(args)
	if err != nil {
		t.Fatalf("ingest %s: %v", strings.Join(args, " "), err)
	}
	return slices.Contains(usesOf(cmd), useRedis)
}

// A PostgreSQL that cannot be reached is one line, saying it once, with
// what to check; run and check --offline exit 1 on it, as on any outage
// (a supervisor restarts a daemon for it). Credentials or TLS the server
// refuses are a configuration: exit 2 from both, as a SQLite file this
// user cannot open is.
func TestPostgresConnectionErrorsNameWhatToCheck(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	good, err := url.Parse(h.withPostgres())
	if err != nil {
		t.Fatal(err)
	}
	unreachable := *good
	unreachable.Host = closedAddr(t)
	stranger := *good
	stranger.User = url.UserPassword("nobody_here", pgPassword)
	tls := *good
	tls.RawQuery = "sslmode=require"
	for _, tc := range []struct {
		name string
		url  url.URL
		code int
		want []string
	}{
		{"unreachable", unreachable, 1, []string{"cannot connect", "connection refused", "host and port", "sslmode", "INGEST_DB", "ingest check"}},
		{"unknown role", stranger, 2, []string{"refused by the server", "nobody_here", "password", "INGEST_DB"}},
		{"TLS the server lacks", tls, 2, []string{"TLS", "sslmode="}},
	} {
		h.set("INGEST_DB", tc.url.String())
		for _, args := range [][]string{{"run", "--once", "--regions", "US"}, {"check", "--offline"}, {"report"}} {
			res := h.run(args...)
			out := res.stdout + res.stderr
			if res.code != tc.code || strings.Contains(out, pgPassword) || strings.Count(out, "open ") > 1 {
				t.Errorf("%s: want exit %d, the database opened once, no password; got %s", tc.name, tc.code, res)
				continue
			}
			for _, w := range tc.want {
				if !strings.Contains(out, w) {
					t.Errorf("%s: want %q said, got %s", tc.name, w, res)
				}
			}
		}
	}
}

// Every listener logs its address once it listens, so a daemon on :0 or
// behind a supervisor can be found; every daemon's last line says it
// stopped.
func TestListenersSayWhereAndDaemonsSayTheyStopped(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.mustRun(0, "run", "--once", "--regions", "US")
	for _, args := range [][]string{
		{"run", "--every", "1h", "--regions", "US", "--listen", "127.0.0.1:0"},
		{"serve", "--listen", "127.0.0.1:0"},
	} {
		p := h.start(args...)
		listening := regexp.MustCompile(`msg=(?:listening|serving) .*url=(http://127\.0\.0\.1:\d+/)`)
		var url string
		if !waitFor(cmdTimeout, func() bool {
			m := listening.FindStringSubmatch(p.out.String())
			if m != nil {
				url = m[1]
			}
			return m != nil || p.exited()
		}) || url == "" {
			t.Fatalf("ingest %s: no line with the address it listens on:\n%s", strings.Join(args, " "), p.out)
		}
		if !waitFor(cmdTimeout, func() bool { return healthy(url + "healthz") }) {
			t.Fatalf("ingest %s: %s logged, but /healthz does not answer there:\n%s", strings.Join(args, " "), url, p.out)
		}
		p.signal(t, syscall.SIGTERM)
		if code, exited := p.wait(cmdTimeout); !exited || code != 0 {
			t.Fatalf("ingest %s after SIGTERM: want exit 0, got %d (exited %v):\n%s", strings.Join(args, " "), code, exited, p.out)
		}
		if last := lastLine(p.out.String()); !strings.Contains(last, "stopped") {
			t.Errorf("ingest %s: want its last line to say it stopped, got %q", strings.Join(args, " "), last)
		}
	}
}

func healthy(u string) bool {
	res, err := http.Get(u)
	if err != nil {
		return false
	}
	res.Body.Close()
	return res.StatusCode == http.StatusOK
}

package main

// End-to-end tests of what an operator reads, fourth pass: no password in
// any output, errors that name their fix, listeners and daemons that say
// where they listen and when they stop.

import (
	"io"
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
		if args[0] == "run" {
			checkAlertSeries(t, url+"metrics")
		}
		p.signal(t, syscall.SIGTERM)
		if code, exited := p.wait(cmdTimeout); !exited || code != 0 {
			t.Fatalf("ingest %s after SIGTERM: want exit 0, got %d (exited %v):\n%s", strings.Join(args, " "), code, exited, p.out)
		}
		if last := lastLine(p.out.String()); !strings.Contains(last, "stopped") {
			t.Errorf("ingest %s: want its last line to say it stopped, got %q:\n%s", strings.Join(args, " "), last, p.out)
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
	h.set("REDIS_URL", "redis://"+closedAddr(t)+"/0")
	res = h.mustRun(0, "run", "--once", "--regions", "GB")
	if n := strings.Count(res.stderr, "go-redis"); n > 0 {
		t.Errorf("an unreachable Redis: the client library's own lines at info, %d of them:\n%s", n, res.stderr)
	}
	if res = h.mustRun(0, "run", "--once", "--regions", "GB", "--log-level", "debug"); !strings.Contains(res.stderr, "component=go-redis") {
		t.Errorf("an unreachable Redis at --log-level debug: want the client library's lines, got %s", res)
	}
}

// checkAlertSeries: the series the alert rules read beside the chart's age
// (deploy/prometheus) are on the daemon's /metrics: the chart's planned
// cadence and the limiter's recovery wait.
func checkAlertSeries(t *testing.T, u string) {
	t.Helper()
	res, err := http.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	for _, want := range []string{`ingest_chart_cadence_seconds{chart="US"} 3600`,
		`ingest_limiter_recovery_wait_until_timestamp_seconds{pool="default"} 0`, `ingest_chart_age_seconds{chart="US"}`} {
		if !strings.Contains(string(body), want) {
			t.Errorf("/metrics of run --every 1h --regions US: no %s\n%s", want, body)
		}
	}
}

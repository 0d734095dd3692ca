package main

// End-to-end tests of configuration errors: exit 2 at start, before
// anything is spent or written, naming the setting and the fix, and never
// a piece of a password.

import (
	"context"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ingestworks/ingest/internal/rig/pgtest"
	"github.com/ingestworks/ingest/internal/rig/redistest"
)

// testPassword holds every character a URL reserves, between pieces of
// letters that appear nowhere else: any piece in any output is a leak.
const testPassword = "Zqv@Jxw:Wkt/Vbr?Ypn#Qmd%Hdg"

var passwordPieces = []string{"Zqv", "Jxw", "Wkt", "Vbr", "Ypn", "Qmd", "Hdg"}

// noPasswordPiece fails the test when res printed a piece of testPassword.
func noPasswordPiece(t *testing.T, res result) {
	t.Helper()
	for _, p := range passwordPieces {
		if strings.Contains(res.stdout+res.stderr, p) {
			t.Errorf("a piece of the password (%q) was printed:\n%s", p, res)
		}
	}
}

// skipApply keeps the harness from running `quota apply --new` on url.
func (h *harness) skipApply(url string) {
	if h.applied == nil {
		h.applied = map[string]bool{}
	}
	h.applied[url] = true
}

// redisURL is a Redis URL with the password percent-encoded as it must be.
func redisURL(addr, password, db string) string {
	u := &url.URL{Scheme: "redis", Host: addr, Path: "/" + db}
	if password != "" {
		u.User = url.UserPassword("", password)
	}
	return u.String()
}

// A wrong password, a missing one, a database index Redis refuses and a
// password not percent-encoded are configuration errors: exit 2 at start,
// naming REDIS_URL and the fix, with nothing spent and no database
// created; the same password percent-encoded works.
func TestRedisRefusalsAreConfigurationErrors(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	srv := redistest.Start(t)
	if reply, err := redistest.Do(srv.Addr, "CONFIG", "SET", "requirepass", testPassword); err != nil || reply != "+OK" {
		t.Fatalf("CONFIG SET requirepass: %q %v", reply, err)
	}
	for _, tc := range []struct{ name, url, want string }{
		{"not encoded", "redis://:" + testPassword + "@" + srv.Addr + "/0", "percent-encode each of @ : / ? # %"},
		{"wrong password", redisURL(srv.Addr, testPassword+"x", "0"), "WRONGPASS"},
		{"no password", redisURL(srv.Addr, "", "0"), "NOAUTH Authentication required): the server requires a password"},
		{"database index", redisURL(srv.Addr, testPassword, "99"), "ERR DB index is out of range"},
	} {
		h.set("REDIS_URL", tc.url)
		h.skipApply(tc.url)
		for _, args := range [][]string{{"run", "--once", "--regions", "US"}, {"report"}, {"quota", "show"}, {"check"}} {
			res := h.run(args...)
			if res.code != 2 || !strings.Contains(res.stdout+res.stderr, "REDIS_URL") || !strings.Contains(res.stdout+res.stderr, tc.want) {
				t.Errorf("%s: want exit 2 naming REDIS_URL and %q, got %s", tc.name, tc.want, res)
			}
			noPasswordPiece(t, res)
		}
	}
	if n := h.fake.Requests(); n != 0 {
		t.Errorf("the upstream was called %d times by runs that could not use their limiter", n)
	}
	if _, err := os.Stat(h.db()); err == nil {
		t.Errorf("a run that exited 2 created %s", h.db())
	}
	h.set("REDIS_URL", redisURL(srv.Addr, testPassword, "0"))
	h.mustRun(0, "quota", "apply", h.newFlag())
	noPasswordPiece(t, h.mustRun(0, "run", "--once", "--regions", "US"))
}

// A credential Redis refuses once the run has begun is a runtime error
// (exit 1), as any other failure of the limiter mid-run.
func TestRedisRefusalMidRunIsARuntimeError(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	srv := redistest.Start(t)
	if reply, err := redistest.Do(srv.Addr, "CONFIG", "SET", "requirepass", testPassword); err != nil || reply != "+OK" {
		t.Fatalf("CONFIG SET requirepass: %q %v", reply, err)
	}
	h.set("REDIS_URL", redisURL(srv.Addr, testPassword, "0"))
	h.mustRun(0, "quota", "apply", h.newFlag())
	h.fake.SetLatency(500 * time.Millisecond)
	p := h.start("run", "--once", "--regions", "US,GB,DE")
	if !waitFor(60*time.Second, func() bool { return h.fake.Requests() >= 1 }) {
		t.Fatalf("no upstream call within 60s\n%s", p.out)
	}
	admin := redis.NewClient(&redis.Options{Addr: srv.Addr, Password: testPassword})
	defer admin.Close()
	ctx := context.Background()
	if err := admin.ConfigSet(ctx, "requirepass", "rotated").Err(); err != nil {
		t.Fatal(err)
	}
	_ = admin.Do(ctx, "CLIENT", "KILL", "TYPE", "normal").Err()
	code, ok := p.wait(cmdTimeout)
	if !ok || code != 1 {
		t.Errorf("a password refused mid-run: exit %d (exited %v), want 1\n%s", code, ok, p.out)
	}
	noPasswordPiece(t, result{stderr: p.out.String()})
}

// A PostgreSQL --db whose password is not percent-encoded is exit 2 with
// the hint, and no message shows a piece of the password, encoded or not.
func TestPostgresPasswordNeverPrinted(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	base, err := url.Parse(pgtest.URL(t))
	if err != nil {
		t.Fatal(err)
	}
	raw := "postgres://" + base.User.Username() + ":" + testPassword + "@" + base.Host + base.Path + "?" + base.RawQuery
	h.set("INGEST_DB", raw)
	for _, args := range [][]string{{"run", "--once", "--regions", "US"}, {"report"}, {"search", "x"}, {"check", "--offline"}} {
		res := h.run(args...)
		if res.code != 2 || !strings.Contains(res.stderr+res.stdout, "INGEST_DB") || !strings.Contains(res.stderr+res.stdout, "percent-encode each of @ : / ? # %") {
			t.Errorf("a password not encoded: want exit 2 naming INGEST_DB and the hint, got %s", res)
		}
		noPasswordPiece(t, res)
	}
	if n := h.fake.Requests(); n != 0 {
		t.Errorf("the upstream was called %d times", n)
	}
	enc := *base
	enc.User = url.UserPassword(base.User.Username(), testPassword)
	h.set("INGEST_DB", enc.String())
	noPasswordPiece(t, h.mustRun(0, "run", "--once", "--regions", "US"))
	noPasswordPiece(t, h.mustRun(0, "check", "--offline"))
	missing := enc
	missing.Path = "/nosuchdb"
	h.set("INGEST_DB", missing.String())
	res := h.run("report")
	if res.code != 2 || !strings.Contains(res.stderr, "does not exist") {
		t.Errorf("a database that does not exist: want exit 2 saying so, got %s", res)
	}
	noPasswordPiece(t, res)
}

// An INGEST_* variable that names no setting is a warning naming the one
// meant, and refused by run --strict before anything is spent; a name a
// setting had before is still read, with a warning naming the new one.
func TestUnknownVariablesAreSaid(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.set("INGEST_RUN_EVRY", "2h")
	res := h.run("run", "--strict", "--regions", "US")
	if res.code != 2 || !strings.Contains(res.stderr, "INGEST_RUN_EVRY is not a setting of ingest and is ignored: did you mean INGEST_RUN_EVERY?") {
		t.Errorf("run --strict with INGEST_RUN_EVRY: want exit 2 naming INGEST_RUN_EVERY, got %s", res)
	}
	if n := h.fake.Requests(); n != 0 {
		t.Errorf("run --strict refused to start but called the upstream %d times", n)
	}
	h.unset("INGEST_RUN_EVRY")
	h.set("INGEST_RUN_KEEP", "30d")
	h.set("INGEST_CATEGORIES", "music")
	res = h.mustRun(0, "run", "--once", "--regions", "US")
	for _, want := range []string{
		"INGEST_RUN_KEEP is not a setting of ingest and is ignored: did you mean INGEST_KEEP?",
		"INGEST_CATEGORIES is read for ingest run --categories until the next release: rename it INGEST_RUN_CATEGORIES",
	} {
		if !strings.Contains(res.stderr, want) {
			t.Errorf("want the warning %q, got %s", want, res)
		}
	}
	h.unset("INGEST_CATEGORIES")
	h.unset("INGEST_RUN_KEEP")
	h.set("INGEST_RUN_CATEGORIES", "music")
	res = h.mustRun(0, "run", "--once", "--regions", "GB")
	if strings.Contains(res.stderr, "WARN") {
		t.Errorf("INGEST_RUN_CATEGORIES warned:\n%s", res)
	}
	if n := queryInt(t, openDB(t, h.db()), `SELECT count(DISTINCT run_id) FROM trending_entries WHERE category = '10'`); n != 2 {
		t.Errorf("%d music charts stored, want US's (INGEST_CATEGORIES) and GB's (INGEST_RUN_CATEGORIES)", n)
	}
}

// --redis-replicas is a number in --help, and a write the replicas did not
// confirm says so without a "(<nil>)".
func TestRedisReplicasSaysWhatItIs(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	help := h.mustRun(0, "run", "--help")
	if !strings.Contains(help.stdout, "--redis-replicas int") {
		t.Errorf("run --help does not show --redis-replicas as a number:\n%s", help.stdout)
	}
	h.withRedis()
	res := h.run("run", "--once", "--regions", "US", "--redis-replicas", "1")
	if !strings.Contains(res.stderr, "0 of 1 replicas confirmed") || strings.Contains(res.stderr, "<nil>") {
		t.Errorf("--redis-replicas 1 without replicas: want it said without <nil>, got %s", res)
	}
}

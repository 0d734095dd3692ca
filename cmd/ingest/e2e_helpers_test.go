package main

// Helpers for the end-to-end tests in the *_e2e_test.go files: TestMain builds the
// ingest binary once, and every test runs it as a subprocess with a clean
// environment against its own fake upstream (fakeyt over httptest), its own
// SQLite file in t.TempDir() and, when it needs one, its own redis-server.
// What the binary left behind is read back with database/sql and go-redis.

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ingestworks/ingest/clock"
	"github.com/ingestworks/ingest/internal/rig/fakeyt"
	"github.com/ingestworks/ingest/internal/rig/pgtest"
	"github.com/ingestworks/ingest/internal/rig/redistest"
	"github.com/ingestworks/ingest/ledger"

	_ "modernc.org/sqlite"
)

// testKey is the API key every test uses: distinctive, so that a leak of
// it anywhere can be found by a plain byte search.
const testKey = "sekret-KEY-1234567"

// cmdTimeout bounds every subprocess that is expected to finish by itself.
const cmdTimeout = 90 * time.Second

func TestMain(m *testing.M) {
	flag.Parse()
	waitTogether()
	os.Exit(buildAndRun(m))
}

// waitTogether runs four tests a core at once, unless -parallel says how
// many: most of a test's time here is its binary waiting (for a slot, a
// signal, a server's timeout, the fake upstream's latency), not computing,
// so tests that wait together finish sooner on the same cores.
func waitTogether() {
	given := false
	flag.Visit(func(f *flag.Flag) { given = given || f.Name == "test.parallel" })
	if !given {
		flag.Set("test.parallel", strconv.Itoa(4*runtime.GOMAXPROCS(0)))
	}
}

// buildAndRun runs the tests, the binaries they run built as they ask
// for them (e2e_binaries_test.go) in a directory removed at the end.
func buildAndRun(m *testing.M) int {
	// A binary built with -race sleeps a second at exit, by default, for
	// other goroutines to report races; the tests start it hundreds of
	// times. A race found is reported either way (and exits 66).
	os.Setenv("GORACE", strings.TrimSpace(os.Getenv("GORACE")+" atexit_sleep_ms=0"))
	dir, err := os.MkdirTemp("", "ingest-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e: temp dir:", err)
		return 1
	}
	defer os.RemoveAll(dir)
	buildDir = dir
	defer writeCPU()
	return pgtest.Run(m)
}

// buildHistory writes days of hourly runs of regions, ending in the hour
// before this one, at path (which must not exist), as cmd/yeardb does,
// without tracking. Building grows with the days asked, so it runs under
// the bound of such work, not a command's.
func buildHistory(t *testing.T, path string, days int, regions ...string) {
	t.Helper()
	buildHistoryTo(t, path, days, time.Time{}, regions...)
}

// buildHistoryTo is buildHistory with its last runs in the hour end (zero:
// the hour before the current one).
func buildHistoryTo(t *testing.T, path string, days int, end time.Time, regions ...string) {
	t.Helper()
	bin := yeardbBin(t) // built before the bound of the work starts
	ctx, cancel := context.WithTimeout(context.Background(), longTimeout)
	defer cancel()
	args := []string{"-db", path, "-days", strconv.Itoa(days), "-regions", strings.Join(regions, ","), "-track", "0"}
	if !end.IsZero() {
		args = append(args, "-end", end.UTC().Format(time.RFC3339))
	}
	cmd := exec.CommandContext(ctx, bin, args...)
	out, err := cmd.CombinedOutput()
	noteCPU(t, cmd)
	if err != nil {
		t.Fatalf("yeardb -db %s -days %d -regions %s: %v\n%s", path, days, strings.Join(regions, ","), err, out)
	}
}

// harness is one test's world: a fake upstream, a directory with the
// database, and the environment the binary gets.
type harness struct {
	applied map[string]bool // the Redis URLs `quota apply` ran on
	t       *testing.T
	dir     string
	fake    *fakeyt.Fake
	srv     *httptest.Server
	env     map[string]string
	reqs    *requestLog
}

// requestLog is every request the fake upstream received, in order: the
// operation's path and its query without the key.
type requestLog struct {
	mu   sync.Mutex
	reqs []url.URL
	held *heldRequests
}

// heldRequests are the requests whose path ends in suffix, kept waiting
// until release is closed; arrived is closed at the first.
type heldRequests struct {
	suffix           string
	arrived, release chan struct{}
	once             sync.Once
}

// hold keeps every request whose path ends in suffix waiting (or until its
// client gives it up) until release is called; arrived is closed when the
// first comes.
func (l *requestLog) hold(suffix string) (arrived <-chan struct{}, release func()) {
	hr := &heldRequests{suffix: suffix, arrived: make(chan struct{}), release: make(chan struct{})}
	l.mu.Lock()
	l.held = hr
	l.mu.Unlock()
	var once sync.Once
	return hr.arrived, func() { once.Do(func() { close(hr.release) }) }
}

// wait holds r when its path is held.
func (hr *heldRequests) wait(r *http.Request) {
	if hr == nil || !strings.HasSuffix(r.URL.Path, hr.suffix) {
		return
	}
	hr.once.Do(func() { close(hr.arrived) })
	select {
	case <-hr.release:
	case <-r.Context().Done():
	}
}

func (l *requestLog) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u := *r.URL
		q := u.Query()
		q.Del("key")
		u.RawQuery = q.Encode()
		l.mu.Lock()
		l.reqs = append(l.reqs, u)
		held := l.held
		l.mu.Unlock()
		held.wait(r)
		next.ServeHTTP(w, r)
	})
}

// requests returns the logged requests whose path ends in suffix.
func (l *requestLog) requests(suffix string) []url.URL {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []url.URL
	for _, u := range l.reqs {
		if strings.HasSuffix(u.Path, suffix) {
			out = append(out, u)
		}
	}
	return out
}

func newHarness(t *testing.T) *harness {
	t.Helper()
	fake := fakeyt.New()
	reqs := &requestLog{}
	srv := httptest.NewServer(reqs.wrap(fake))
	t.Cleanup(srv.Close)
	dir := t.TempDir()
	ingestBin(t) // built now, not within a command's bound
	return &harness{t: t, dir: dir, fake: fake, srv: srv, reqs: reqs, env: map[string]string{
		"YOUTUBE_API_KEY":  testKey,
		"YOUTUBE_ENDPOINT": srv.URL + "/",
		"INGEST_DB":        filepath.Join(dir, "ingest.db"),
	}}
}

func (h *harness) db() string { return h.env["INGEST_DB"] }

func (h *harness) set(k, v string) { h.env[k] = v }

func (h *harness) unset(k string) { delete(h.env, k) }

// clockAt sets the commands' house clock (a rehearsal's offset) so that
// the next command reads at when it starts. Set again before each of two
// commands, it has them read one instant but for their own starts, where
// the host's clock would have them read instants a busy machine spaces by
// seconds. It returns the offset it set.
func (h *harness) clockAt(at time.Time) time.Duration {
	h.t.Helper()
	offset := time.Until(at)
	file := filepath.Join(h.dir, "clock-offset")
	if err := os.WriteFile(file, []byte(offset.String()), 0o644); err != nil {
		h.t.Fatal(err)
	}
	h.set(clock.RehearseEnv, file)
	return offset
}

// betweenRows is an instant after a history of buildHistoryTo ending in
// the hour end at which a prune's every cut (now less whole hours: days
// kept, the quota's span) falls minutes from any of its rows: those sit
// in the first seconds of each chart's share of an hour, a fifth of an
// hour or more apart for at most five charts.
func betweenRows(end time.Time) time.Time {
	return end.Truncate(time.Hour).Add(time.Hour + 6*time.Minute)
}

// withRedis starts a redis-server for this test and points REDIS_URL at it.
func (h *harness) withRedis() *redistest.Server {
	h.t.Helper()
	s := redistest.Start(h.t)
	h.set("REDIS_URL", "redis://"+s.Addr+"/0")
	return s
}

// tightCosts writes a costs file whose default pool admits limit units a
// day, with no reserve, and points INGEST_COSTS at it.
// chargedDefault is what the fake upstream charged the test's key in the
// default pool, the one tightCosts limits: a daemon's tracking spends the
// stats pool, which a check against the default pool's limit leaves out.
func (h *harness) chargedDefault() int64 {
	return h.fake.ChargedBuckets(testKey)[fakeyt.BucketDefault]
}

func (h *harness) tightCosts(limit int) string {
	h.t.Helper()
	body := fmt.Sprintf(`pools:
  default: {limit: %d, reserve: 0, window: 24h, fail_open: {max_cost: 1, budget: 200}}
  search:  {limit: 100, reserve: 0, window: 24h}
  stats:   {limit: 10000, reserve: 0, window: 24h}
operations:
  videos.list:          {default: 1}
  videoCategories.list: {default: 1}
  i18nRegions.list:     {default: 1}
  search.list:          {search: 1}
  videos.batchGetStats: {stats: 1}
`, limit)
	path := filepath.Join(h.dir, fmt.Sprintf("costs-%d.yaml", limit))
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		h.t.Fatal(err)
	}
	h.set("INGEST_COSTS", path)
	return path
}

// result is how one invocation of the binary ended.
type result struct {
	args           []string
	code           int
	stdout, stderr string
}

func (r result) String() string {
	return fmt.Sprintf("ingest %s: exit %d\n--- stdout:\n%s\n--- stderr:\n%s", strings.Join(r.args, " "), r.code, r.stdout, r.stderr)
}

func (h *harness) command(ctx context.Context, args ...string) *exec.Cmd {
	h.created(ctx, args)
	return h.bare(ctx, args...)
}

// created runs `ingest quota apply --new=KEY` once per Redis, before any
// other command, as an operator does once per quota key before the first
// run.
func (h *harness) created(ctx context.Context, args []string) {
	url := h.env["REDIS_URL"]
	if url == "" || h.applied[url] || (len(args) > 0 && args[0] == "quota") {
		return
	}
	if h.applied == nil {
		h.applied = map[string]bool{}
	}
	h.applied[url] = true
	c := h.bare(ctx, "quota", "apply", h.newFlag())
	_ = c.Run()
	noteCPU(h.t, c)
}

// newFlag is quota apply's --new with the harness's quota key typed again:
// INGEST_QUOTA_KEY, else the hash of YOUTUBE_API_KEY.
func (h *harness) newFlag() string {
	if k := h.env["INGEST_QUOTA_KEY"]; k != "" {
		return "--new=" + k
	}
	return "--new=" + ledger.KeyHash(h.env["YOUTUBE_API_KEY"])
}

// scratchEnv is an environment of the given variables alone, and the race
// detector's options of this process.
func scratchEnv(kv ...string) []string {
	return append(kv, "GORACE="+os.Getenv("GORACE"))
}

func (h *harness) bare(ctx context.Context, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, ingestBin(h.t), args...)
	cmd.Dir = h.dir
	cmd.Env = scratchEnv("PATH="+os.Getenv("PATH"), "HOME="+os.Getenv("HOME"))
	for k, v := range h.env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	cmd.WaitDelay = 5 * time.Second
	return cmd
}

// longTimeout bounds a subprocess whose work grows with the data it is
// given (a copy of a month of charts): a loaded machine slows it, and only a
// hang should fail the test.
const longTimeout = 10 * time.Minute

// run runs the binary to its end, failing the test if it takes longer than
// cmdTimeout, or longTimeout for a command over every catalogued region.
func (h *harness) run(args ...string) result {
	h.t.Helper()
	if overEveryRegion(args) {
		return h.runWithin(longTimeout, args...)
	}
	return h.runWithin(cmdTimeout, args...)
}

// overEveryRegion says whether args name a selection of every catalogued
// region (all, or all with a tier or depth): such a command's work grows
// with the catalogue, not with what the test chose.
func overEveryRegion(args []string) bool {
	for i, a := range args {
		v, ok := strings.CutPrefix(a, "--regions=")
		if !ok && a == "--regions" && i+1 < len(args) {
			v, ok = args[i+1], true
		}
		if !ok {
			continue
		}
		for _, part := range strings.Split(v, ",") {
			if name, _, _ := strings.Cut(part, ":"); strings.EqualFold(name, "all") {
				return true
			}
		}
	}
	return false
}

// runWithin runs the binary to its end, failing the test if it takes longer
// than limit.
func (h *harness) runWithin(limit time.Duration, args ...string) result {
	h.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	cmd := h.command(ctx, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	noteCPU(h.t, cmd)
	res := result{args: args, code: exitCode(err), stdout: stdout.String(), stderr: stderr.String()}
	if ctx.Err() != nil {
		h.t.Fatalf("ingest %s did not finish within %s\n%s", strings.Join(args, " "), limit, res)
	}
	if res.code == 66 && strings.Contains(res.stderr, "WARNING: DATA RACE") {
		h.t.Errorf("data race in ingest %s:\n%s", strings.Join(args, " "), res.stderr)
	}
	return res
}

// mustRun runs the binary and fails the test unless it exits with want.
func (h *harness) mustRun(want int, args ...string) result {
	h.t.Helper()
	res := h.run(args...)
	if res.code != want {
		h.t.Fatalf("want exit %d, got %s", want, res)
	}
	return res
}

// mustRunGrowing is mustRun for a command whose work grows with its data
// (every catalogued region, a history of days): it gets longTimeout, so a
// loaded machine slows it and only a hang fails the test.
func (h *harness) mustRunGrowing(want int, args ...string) result {
	h.t.Helper()
	res := h.runWithin(longTimeout, args...)
	if res.code != want {
		h.t.Fatalf("want exit %d, got %s", want, res)
	}
	return res
}

func exitCode(err error) int {
	if err == nil {
		return 0
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return 128 + int(ws.Signal())
		}
		return ee.ExitCode()
	}
	return -1
}

// proc is a binary running in the background (the daemon, a crash victim).
type proc struct {
	cmd    *exec.Cmd
	out    *lockedBuffer
	done   chan struct{}
	code   int
	cancel context.CancelFunc
}

type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// start runs the binary in the background; the test's cleanup kills it
// if it is still running.
func (h *harness) start(args ...string) *proc {
	h.t.Helper()
	return h.startFor(3*cmdTimeout, args...)
}

// startFor is start for a daemon a test watches for longer than start's
// bound: it is killed after d.
func (h *harness) startFor(d time.Duration, args ...string) *proc {
	h.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	p := &proc{cmd: h.command(ctx, args...), out: &lockedBuffer{}, done: make(chan struct{}), cancel: cancel}
	p.cmd.Stdout, p.cmd.Stderr = p.out, p.out
	if err := p.cmd.Start(); err != nil {
		cancel()
		h.t.Fatalf("start ingest %s: %v", strings.Join(args, " "), err)
	}
	go func() {
		p.code = exitCode(p.cmd.Wait())
		noteCPU(h.t, p.cmd)
		close(p.done)
	}()
	h.t.Cleanup(func() {
		_ = p.cmd.Process.Kill()
		<-p.done
		cancel()
		p.noRace(h.t, args)
	})
	return p
}

// noRace fails t when the process reported a data race: a daemon a test
// kills at its end never exits 66 to say so.
func (p *proc) noRace(t *testing.T, args []string) {
	t.Helper()
	if out := p.out.String(); strings.Contains(out, "WARNING: DATA RACE") {
		t.Errorf("data race in ingest %s:\n%s", strings.Join(args, " "), out)
	}
}

func (p *proc) signal(t *testing.T, sig os.Signal) {
	t.Helper()
	if err := p.cmd.Process.Signal(sig); err != nil {
		t.Fatalf("signal %v: %v", sig, err)
	}
}

// wait waits at most d for the process to exit.
func (p *proc) wait(d time.Duration) (code int, exited bool) {
	select {
	case <-p.done:
		return p.code, true
	case <-time.After(d):
		return 0, false
	}
}

func (p *proc) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// openDB opens the database the binary wrote, for reading.
func openDB(t *testing.T, path string) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(10000)&_pragma=query_only(1)")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func queryInt(t *testing.T, db *sql.DB, q string, args ...any) int64 {
	t.Helper()
	var n sql.NullInt64
	if err := db.QueryRow(q, args...).Scan(&n); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return n.Int64
}

func queryString(t *testing.T, db *sql.DB, q string, args ...any) string {
	t.Helper()
	var s sql.NullString
	if err := db.QueryRow(q, args...).Scan(&s); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return s.String
}

// runRow is one row of the runs table.
type runRow struct {
	ID      int64
	Region  string
	Kind    string
	Status  string
	Pages   int
	Videos  int
	Message string
	Entries int // trending entries or search results stored for the run
}

func runRows(t *testing.T, db *sql.DB) []runRow {
	t.Helper()
	rows, err := db.Query(`SELECT id, region, kind, status, pages, videos, message,
		(SELECT count(*) FROM trending_entries e WHERE e.run_id = runs.id) +
		(SELECT count(*) FROM search_results s WHERE s.run_id = runs.id)
		FROM runs ORDER BY id`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []runRow
	for rows.Next() {
		var r runRow
		if err := rows.Scan(&r.ID, &r.Region, &r.Kind, &r.Status, &r.Pages, &r.Videos, &r.Message, &r.Entries); err != nil {
			t.Fatal(err)
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// lastRuns is the latest run of each region of one kind.
func lastRuns(t *testing.T, db *sql.DB, kind string) map[string]runRow {
	t.Helper()
	out := map[string]runRow{}
	for _, r := range runRows(t, db) {
		if r.Kind == kind {
			out[r.Region] = r
		}
	}
	return out
}

// ledgerUnits sums the ledger's units in pool (all quota keys), less the
// calls given back (never sent), as the store's own reads of it do.
func ledgerUnits(t *testing.T, path, pool string) int64 {
	t.Helper()
	return queryInt(t, openDB(t, path), `SELECT coalesce(sum(units), 0) FROM ledger WHERE pool = ?
  AND NOT EXISTS (SELECT 1 FROM ledger_given_back g WHERE g.quota_key = ledger.quota_key AND g.call_id = ledger.call_id)`, pool)
}

// pagesFor is how many pages of 50 a chart of n videos takes.
func pagesFor(n int) int { return (n + 49) / 50 }

// reportOut is `ingest report --json`, the fields docs/contract.md promises.
type reportOut struct {
	QuotaKey string `json:"quota_key"`
	Backend  string `json:"backend"`
	UsedFrom string `json:"used_from"`
	Pools    []struct {
		Name         string  `json:"name"`
		Limit        int64   `json:"limit"`
		Reserve      int64   `json:"reserve"`
		Used         int64   `json:"used"`
		Remaining    int64   `json:"remaining"`
		FreeAt       *string `json:"free_at"`
		BlockedUntil *string `json:"blocked_until"`
		Unmetered    int64   `json:"unmetered"`
		FailOpen     int64   `json:"fail_open_budget"`
	} `json:"pools"`
	Operations []struct {
		Op    string `json:"op"`
		Calls int    `json:"calls"`
		Units int64  `json:"units"`
	} `json:"operations"`
	Regions       []reportRegion `json:"regions"`
	UpstreamReset string         `json:"upstream_reset"`
}

// reportRegion is a region of reportOut.
type reportRegion struct {
	Code    string  `json:"code"`
	Name    string  `json:"name"`
	Status  string  `json:"status"`
	LastRun *string `json:"last_run"`
	Videos  int     `json:"videos"`
	Units   int64   `json:"units"`
	NextRun *string `json:"next_run"`
}

func (h *harness) report(args ...string) reportOut {
	h.t.Helper()
	res := h.mustRun(0, append([]string{"report", "--json"}, args...)...)
	var rep reportOut
	if err := json.Unmarshal([]byte(res.stdout), &rep); err != nil {
		h.t.Fatalf("report --json is not the JSON object docs/contract.md gives: %v\n%s", err, res)
	}
	return rep
}

// pool finds a pool of the report, failing the test when it is missing.
func (r reportOut) pool(t *testing.T, name string) (used, limit, reserve, remaining int64, freeAt, blockedUntil *string) {
	t.Helper()
	for _, p := range r.Pools {
		if p.Name == name {
			return p.Used, p.Limit, p.Reserve, p.Remaining, p.FreeAt, p.BlockedUntil
		}
	}
	t.Fatalf("report has no pool %q: %+v", name, r.Pools)
	return
}

// hit is one result of `ingest search --json`.
type hit struct {
	ID      string   `json:"id"`
	Title   string   `json:"title"`
	Channel string   `json:"channel"`
	Regions []string `json:"regions"`
	Snippet string   `json:"snippet"`
}

// searchJSON runs a search that must succeed and decodes its hits.
func (h *harness) searchJSON(args ...string) []hit {
	h.t.Helper()
	res := h.mustRun(0, append([]string{"search", "--json"}, args...)...)
	var hits []hit
	if err := json.Unmarshal([]byte(res.stdout), &hits); err != nil {
		h.t.Fatalf("search --json is not a JSON array of hits: %v\n%s", err, res)
	}
	return hits
}

// fileBytes reads a file; a missing file reads as nil.
func fileBytes(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// redisDump is every key of a Redis database with its value rendered as
// text, type by type (DUMP would compress long strings).
func redisDump(t *testing.T, addr string) map[string]string {
	t.Helper()
	c := redis.NewClient(&redis.Options{Addr: addr})
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	keys, err := c.Keys(ctx, "*").Result()
	if err != nil {
		t.Fatalf("redis KEYS *: %v", err)
	}
	out := map[string]string{}
	for _, k := range keys {
		typ, err := c.Type(ctx, k).Result()
		if err != nil {
			t.Fatalf("redis TYPE %s: %v", k, err)
		}
		var v any
		switch typ {
		case "string":
			v, err = c.Get(ctx, k).Result()
		case "hash":
			v, err = c.HGetAll(ctx, k).Result()
		case "zset":
			v, err = c.ZRangeWithScores(ctx, k, 0, -1).Result()
		case "list":
			v, err = c.LRange(ctx, k, 0, -1).Result()
		case "set":
			var m []string
			m, err = c.SMembers(ctx, k).Result()
			sort.Strings(m)
			v = m
		case "stream":
			v, err = c.XRange(ctx, k, "-", "+").Result()
		case "none":
			continue
		default:
			v = "(type " + typ + ")"
		}
		if err != nil {
			t.Fatalf("redis read %s (%s): %v", k, typ, err)
		}
		out[k] = fmt.Sprintf("%s %v", typ, v)
	}
	return out
}

// waitFor polls cond every 50ms for at most d.
func waitFor(d time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(d)
	for {
		if cond() {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// trendingEntries counts the trending entries stored so far, 0 while the
// database or its schema is not there yet.
func trendingEntries(path string) int64 {
	if _, err := os.Stat(path); err != nil {
		return 0
	}
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(10000)&_pragma=query_only(1)")
	if err != nil {
		return 0
	}
	defer db.Close()
	var n int64
	if err := db.QueryRow(`SELECT count(*) FROM trending_entries`).Scan(&n); err != nil {
		return 0
	}
	return n
}

// openRW opens the database for the checks that write (the FTS5
// integrity-check is an INSERT); the caller closes it.
func openRW(t *testing.T, path string) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(10000)")
	if err != nil {
		t.Fatal(err)
	}
	db.SetMaxOpenConns(1)
	t.Cleanup(func() { db.Close() })
	return db
}

// asBrowser asks as a browser's own pages do, following no redirect, so
// that a sign-in's 303 and its cookie are what the test reads.
var asBrowser = &http.Client{Timeout: 10 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

// sendForm sends method to addr as the site's own form does (same origin,
// the form encoded, the cookie when set) and returns the answer, its body
// read and closed.
func sendForm(t *testing.T, method, addr string, form url.Values, cookie *http.Cookie) *http.Response {
	t.Helper()
	req, err := http.NewRequest(method, addr, strings.NewReader(form.Encode()))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Sec-Fetch-Site", "same-origin")
	if cookie != nil {
		req.AddCookie(cookie)
	}
	res, err := asBrowser.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, addr, err)
	}
	io.Copy(io.Discard, res.Body)
	res.Body.Close()
	return res
}

// signIn posts the sign-in form at base with token: the answer's status
// and its session cookie, nil when it set none.
func signIn(t *testing.T, base, token string) (int, *http.Cookie) {
	t.Helper()
	res := sendForm(t, http.MethodPost, base+"/login", url.Values{"token": {token}}, nil)
	for _, c := range res.Cookies() {
		if c.Name == "ingest_session" {
			return res.StatusCode, c
		}
	}
	return res.StatusCode, nil
}

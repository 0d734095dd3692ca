package quota_test

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/clock"
	"github.com/ingestworks/ingest/costs"
	"github.com/ingestworks/ingest/internal/rig/redistest"
	"github.com/ingestworks/ingest/quota"
)

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

func redisHarness(client func(t *testing.T) redis.UniversalClient) harness {
	return redisHarnessBy(client, noDrift)
}

// redisHarnessBy is redisHarness on Redis's clock moved by drift.
func redisHarnessBy(client func(t *testing.T) redis.UniversalClient, drift drift) harness {
	as := func(t *testing.T, key string, costs *ingest.Costs, offset time.Duration, ledger string) limiter {
		moved := drift(t)
		l, err := newRedis(client(t), limOpts{QuotaKey: key, Costs: costs, Timeout: hangFree, Logger: quiet, Ledger: ledger,
			ClockOffset: offset, Drift: moved, Clock: clock.Func(func() time.Time { return time.Now().Add(offset + moved()) })})
		if err != nil {
			t.Fatal(err)
		}
		created(t, l)
		return l
	}
	at := func(t *testing.T, key string, costs *ingest.Costs, offset time.Duration) limiter {
		return as(t, key, costs, offset, "")
	}
	return harness{
		at: at,
		as: func(t *testing.T, key string, costs *ingest.Costs, ledger string) limiter {
			return as(t, key, costs, 0, ledger)
		},
		databases: true,
		open:      func(t *testing.T, key string, costs *ingest.Costs) limiter { return at(t, key, costs, 0) },
		plant: func(t *testing.T, key, name, token string, ttl time.Duration) {
			if err := client(t).Set(context.Background(), "ingest:{"+key+"}:lock:"+name, token, ttl).Err(); err != nil {
				t.Fatal(err)
			}
		},
		holder: func(t *testing.T, key, name string) string {
			v, err := client(t).Get(context.Background(), "ingest:{"+key+"}:lock:"+name).Result()
			if err != nil && !errors.Is(err, redis.Nil) {
				t.Fatal(err)
			}
			return v
		},
		now: func(t *testing.T) time.Time { return redisTime(t, client(t)).Add(drift(t)()) },
	}
}

// redisTime reads the server's clock, which the limiter's scripts decide by.
func redisTime(t testing.TB, c redis.UniversalClient) time.Time {
	t.Helper()
	now, err := c.Time(context.Background()).Result()
	if err != nil {
		t.Fatal(err)
	}
	return now
}

// created makes the quota key's configuration, as `ingest quota apply`
// does, unless it is there already.
func created(t testing.TB, l *quota.Redis) {
	t.Helper()
	conf, err := l.Config(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range conf {
		if c.Limiter != "" {
			return
		}
	}
	_, err = l.ApplyConfig(context.Background())
	if err != nil && strings.Contains(err.Error(), "replicas confirmed the write") {
		// A fault test's short timeout can end before a replica on a
		// loaded machine confirms; the configuration is on the primary,
		// which is what setting up needs (the tests wait for the replica
		// themselves before they break anything).
		if conf, cerr := l.Config(context.Background()); cerr == nil && slices.ContainsFunc(conf, func(c quota.PoolConfig) bool { return c.Limiter != "" }) {
			return
		}
	}
	if err != nil {
		t.Fatal(err)
	}
}

// openRedis is quota.NewRedis on a quota key created as `ingest quota
// apply` creates it.
// A limiter's timeout, when the test gives none, is one a busy machine
// meets (newClient's): the shipped one is for a hung server, and these
// tests hang none.
func openRedis(t testing.TB, c redis.UniversalClient, o limOpts) (*quota.Redis, error) {
	o.Timeout = cmp.Or(o.Timeout, 2*time.Second)
	l, err := newRedis(c, o)
	if err == nil {
		created(t, l)
	}
	return l, err
}

// newClient opens a client as the worker does (quota.NewClient), with a
// timeout a busy test machine meets.
func newClient(t testing.TB, addr string) *redis.Client {
	u, err := quota.NewClient("redis://"+addr, 2*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { u.Close() })
	return u.(*redis.Client)
}

func TestRedisConformance(t *testing.T) {
	srv := redistest.Start(t)
	client, err := quota.NewClient("redis://"+srv.Addr, hangFree)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { client.Close() })
	runConformance(t, driven(func(d drift) harness {
		return redisHarnessBy(func(*testing.T) redis.UniversalClient { return client }, d)
	}))
}

func TestRedisClusterConformance(t *testing.T) {
	t.Parallel()
	cl := redistest.StartCluster(t)
	client := redis.NewClusterClient(&redis.ClusterOptions{Addrs: cl.Addrs(), ReadTimeout: hangFree, WriteTimeout: hangFree})
	t.Cleanup(func() { client.Close() })
	t.Run("OneSlot", func(t *testing.T) {
		l, err := openRedis(t, client, limOpts{QuotaKey: "slot", Costs: testCosts(t, 100, 0, 5, time.Minute)})
		if err != nil {
			t.Fatal(err)
		}
		ctx := context.Background()
		want, err := client.ClusterKeySlot(ctx, "{slot}").Result()
		if err != nil {
			t.Fatal(err)
		}
		for _, k := range append(l.Keys(), "ingest:{slot}:lock:US") {
			if got, err := client.ClusterKeySlot(ctx, k).Result(); err != nil || got != want {
				t.Errorf("CLUSTER KEYSLOT %s: got %d, %v; want %d", k, got, err, want)
			}
		}
		if d, err := l.Take(ctx, ingest.Caller{}, "search.list"); err != nil || !d.Allowed {
			t.Fatalf("take on the cluster: %+v, %v", d, err)
		}
	})
	runConformance(t, driven(func(d drift) harness {
		return redisHarnessBy(func(*testing.T) redis.UniversalClient { return client }, d)
	}))
}

// TestRedisKeysExpire checks that every key the limiter wrote expires.
func TestRedisKeysExpire(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	c := newClient(t, srv.Addr)
	l, err := openRedis(t, c, limOpts{QuotaKey: "ttl", Costs: testCosts(t, 1000, 0, 5, time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if d, err := l.Take(ctx, ingest.Caller{}, "search.list"); err != nil || !d.Allowed {
		t.Fatalf("take: %+v, %v", d, err)
	}
	if _, err := l.Block(ctx, "search", ""); err != nil {
		t.Fatal(err)
	}
	keys, err := c.Keys(ctx, "*").Result()
	if err != nil || len(keys) != 6 {
		t.Fatalf("keys: got %v, %v; want the configuration, the state, the ledgers, a log per pool, the receipts", keys, err)
	}
	for _, k := range keys {
		ttl, err := c.PTTL(ctx, k).Result()
		if strings.HasSuffix(k, ":conf") {
			// Created on purpose by `quota apply`: it never expires.
			if err != nil || ttl != -1 {
				t.Errorf("PTTL %s: got %s, %v; want no expiry", k, ttl, err)
			}
			continue
		}
		// A pool remembers its window or a 25-hour day, whichever is longer.
		if err != nil || ttl <= 0 || ttl > 25*time.Hour+2*time.Minute {
			t.Errorf("PTTL %s: got %s, %v; want at most 25 hours", k, ttl, err)
		}
	}
}

// TestRedisStateReadOnly: State runs as EVALSHA_RO, which Redis refuses for
// any script that writes; and a read-only user may call it.
func TestRedisStateReadOnly(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	ctx := context.Background()
	admin := newClient(t, srv.Addr)
	costs := testCosts(t, 1000, 0, 5, 300*time.Millisecond)
	w, _ := openRedis(t, admin, limOpts{QuotaKey: "ro", Costs: costs})
	var last ingest.Decision
	for range 3 {
		d, err := w.Take(ctx, ingest.Caller{}, "search.list")
		if err != nil {
			t.Fatal(err)
		}
		last = d
	}
	// the entries out of the window, not trimmed
	awaitClock(t, func() time.Time { return redisTime(t, admin) }, last.At.Add(301*time.Millisecond))
	if err := admin.Do(ctx, "ACL", "SETUSER", "reader", "on", ">pw", "~*", "-@all", "+@read", "+evalsha_ro", "+eval_ro", "+time").Err(); err != nil {
		t.Fatal(err)
	}
	reader := redis.NewClient(&redis.Options{Addr: srv.Addr, Username: "reader", Password: "pw"})
	defer reader.Close()
	r, _ := openRedis(t, reader, limOpts{QuotaKey: "ro", Costs: costs})
	s, err := r.State(ctx)
	if err != nil {
		t.Fatalf("state as a read-only user: %v", err)
	}
	if s[0].Used != 0 {
		t.Fatalf("state: got %+v, want nothing used", s)
	}
	if n, _ := admin.XLen(ctx, "ingest:{ro}:log:default").Result(); n != 3 {
		t.Fatalf("state trimmed the log: %d entries left, want 3", n)
	}
}

func TestRedisScriptFlush(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	l, _ := openRedis(t, newClient(t, srv.Addr), limOpts{QuotaKey: "flush", Costs: testCosts(t, 1000, 0, 5, time.Minute)})
	ctx := context.Background()
	for i := range 20 {
		if i == 10 {
			if r, err := redistest.Do(srv.Addr, "SCRIPT", "FLUSH"); err != nil || r != "+OK" {
				t.Fatalf("SCRIPT FLUSH: %q %v", r, err)
			}
		}
		if d, err := l.Take(ctx, ingest.Caller{}, "videos.list"); err != nil || !d.Allowed || d.Unmetered {
			t.Fatalf("call %d: %+v, %v", i, d, err)
		}
	}
	if s, err := l.State(ctx); err != nil || s[0].Used != 20 {
		t.Fatalf("state: %+v, %v; want 20 used", s, err)
	}
}

// forgetful are notes that keep nothing.
type forgetful struct{}

func (forgetful) Note(context.Context, string, string) error    { return nil }
func (forgetful) Noted(context.Context, string) (string, error) { return "", nil }

// TestRedisFlushallRestore: after FLUSHALL a worker that knows what it
// spent refuses to spend metered until the window is whole again; here
// nobody could vouch for who spent (no fresh register), so it waits until
// an operator restores the ledgers.
func TestRedisFlushallRestore(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	// The worker's ledger keeps nothing it could recall, nor a copy of the
	// list of ledgers: the calls are the operator's to restore.
	forgets := func(context.Context) (ingest.Recalled, error) { return ingest.Recalled{}, nil }
	l, _ := openRedis(t, newClient(t, srv.Addr), limOpts{QuotaKey: "lost", Costs: testCosts(t, 1000, 0, 5, time.Minute), Logger: quiet,
		Recall: forgets, Notes: forgetful{}})
	ctx := context.Background()
	var ledger []ingest.Call
	for i := range 30 {
		op := "videos.list"
		if i%10 == 0 {
			op = "search.list"
		}
		d, err := l.Take(ctx, ingest.Caller{}, op)
		if err != nil || !d.Allowed {
			t.Fatalf("call %d: %+v, %v", i, d, err)
		}
		ledger = append(ledger, ingest.Call{QuotaKey: "lost", ID: d.ID, At: d.At, Op: op, Charges: d.Charges})
	}
	if r, err := redistest.Do(srv.Addr, "FLUSHALL"); err != nil || r != "+OK" {
		t.Fatalf("FLUSHALL: %q %v", r, err)
	}
	flushed := time.Now().Truncate(time.Millisecond)
	d, err := l.Take(ctx, ingest.Caller{}, "videos.list")
	if err != nil || d.Allowed || pool(d, "default").WaitUntil.IsZero() {
		t.Fatalf("after FLUSHALL: %+v, %v; want refused, waiting", d, err)
	}
	if want := flushed.Add(time.Minute); d.RetryAt.Before(want) {
		t.Fatalf("after FLUSHALL: retry at %s, want no earlier than the window's end %s", d.RetryAt, want)
	}
	for i, want := range []int{30, 0} {
		if n, err := l.Restore(ctx, []quota.HostLedger{{ID: "operator", Where: "at hand", Calls: ingest.Recalled{Calls: ledger}}}); err != nil || n != want {
			t.Fatalf("restore %d: got %d, %v; want %d", i+1, n, err, want)
		}
		s, _ := l.State(ctx)
		if s[0].Used != 27+300 || s[1].Used != 3 || !s[0].WaitUntil.IsZero() {
			t.Fatalf("after restore %d: %+v, want default 327, search 3, no wait", i+1, s)
		}
	}
	d, err = l.Take(ctx, ingest.Caller{}, "videos.list")
	if err != nil || !d.Allowed || !idLess(ledger[len(ledger)-1].ID, d.ID) {
		t.Fatalf("after restore: %+v, %v; want admitted with an id above %s", d, err, ledger[len(ledger)-1].ID)
	}
}

// ledgers are the workers' own ledgers in a test, one per worker.
type ledgers struct {
	mu    sync.Mutex
	calls map[int][]ingest.Call
}

func (l *ledgers) recall(i int) func(context.Context) (ingest.Recalled, error) {
	return func(context.Context) (ingest.Recalled, error) {
		l.mu.Lock()
		defer l.mu.Unlock()
		return ingest.Recalled{Calls: append([]ingest.Call(nil), l.calls[i]...)}, nil
	}
}

func (l *ledgers) add(i int, quotaKey string, d ingest.Decision) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.calls == nil {
		l.calls = map[int][]ingest.Call{}
	}
	l.calls[i] = append(l.calls[i], ingest.Call{QuotaKey: quotaKey, ID: d.ID, At: d.At, Op: d.Op, Charges: d.Charges, Unmetered: d.Unmetered})
}

// TestRedisRecallsAfterLosingData: two workers with ledgers of their own
// share a Redis that restarts empty. The first to notice names both from
// its fresh copy of the register; the limiter admits nothing metered until
// both have refilled, so the limit holds across the loss.
func TestRedisRecallsAfterLosingData(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	ctx := context.Background()
	costs, err := costs.Parse("amnesia", []byte("pools:\n  default: {limit: 50, window: 1h}\noperations:\n  videos.list: {default: 1}\n"))
	if err != nil {
		t.Fatal(err)
	}
	var books ledgers
	workers := make([]*quota.Redis, 2)
	for i := range workers {
		workers[i], _ = openRedis(t, newClient(t, srv.Addr), limOpts{QuotaKey: "amnesia", Costs: costs,
			Recall: books.recall(i), Logger: quiet, Timeout: 2 * time.Second, Ledger: fmt.Sprintf("w%d", i)})
	}
	take := func(i int) bool {
		d, err := workers[i].Take(ctx, ingest.Caller{}, "videos.list")
		if err != nil {
			t.Fatalf("worker %d: %v", i, err)
		}
		if d.Allowed {
			books.add(i, "amnesia", d)
		}
		return d.Allowed
	}
	for n := range 30 {
		take(n % 2)
	}
	for _, w := range workers {
		if err := w.Heartbeat(ctx); err != nil {
			t.Fatal(err)
		}
	}
	srv.Restart(t)
	if take(0) {
		t.Fatal("worker 0 right after the loss: admitted before worker 1 refilled")
	}
	// The pool resumes once both ledgers refilled and a quiet period of
	// their cadence passed; then it fills to what they do not hold.
	admitted, refused := 0, 0
	for n := 0; n < 2000 && (admitted == 0 || refused < 10); n++ {
		switch {
		case take((n + 1) % 2):
			admitted, refused = admitted+1, 0
		case admitted > 0:
			refused++
		default:
			time.Sleep(5 * time.Millisecond)
		}
	}
	if admitted != 20 {
		t.Fatalf("after the restart %d more calls were admitted, want 20 (50 - the 30 both ledgers hold)", admitted)
	}
	if s, _ := workers[0].State(ctx); s[0].Used != 50 {
		t.Fatalf("used %d after the restart, want 50", s[0].Used)
	}
}

// TestRedisDown: with Redis gone, cheap calls go ahead unmetered within the
// pool's fail_open budget and dear ones fail with ErrUnavailable, each
// within about the timeout; once Redis answers again the unmetered calls
// are written into the window, once.
func TestRedisDown(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	var books ledgers
	l, _ := openRedis(t, newClient(t, srv.Addr), limOpts{QuotaKey: "down", Costs: testCosts(t, 1000, 0, 5, time.Minute),
		Logger: quiet, Recall: books.recall(0), Ledger: "w0"})
	ctx := context.Background()
	d, err := l.Take(ctx, ingest.Caller{}, "videos.list")
	if err != nil || d.Unmetered {
		t.Fatalf("before: %+v, %v", d, err)
	}
	books.add(0, "down", d)
	if err := l.Heartbeat(ctx); err != nil {
		t.Fatal(err)
	}
	srv.Stop()
	const bound = 2 * time.Second // hang detection, not a timing assertion
	for i := range 4 {
		start := time.Now()
		d, err := l.Take(ctx, ingest.Caller{}, "videos.list")
		took := time.Since(start)
		if i < 3 && (err != nil || !d.Allowed || !d.Unmetered || d.ID == "" || took > bound) {
			t.Fatalf("cheap call %d while down: %+v, %v after %s; want unmetered within %s", i, d, err, took, bound)
		}
		if i == 3 && !errors.Is(err, quota.ErrUnavailable) {
			t.Fatalf("cheap call %d while down, past fail_open.budget 3: %+v, %v; want ErrUnavailable", i, d, err)
		}
		if d.Allowed {
			books.add(0, "down", d)
		}
		start = time.Now()
		d, err = l.Take(ctx, ingest.Caller{}, "search.list")
		if took := time.Since(start); !errors.Is(err, quota.ErrUnavailable) || d.Allowed || took > bound {
			t.Fatalf("dear call %d while down: %+v, %v after %s; want ErrUnavailable within %s", i, d, err, took, bound)
		}
	}
	srv.Restart(t) // empty: this worker vouches for itself and refills
	deadline := time.Now().Add(5 * time.Second)
	for {
		d, err := l.Take(ctx, ingest.Caller{}, "search.list")
		if err == nil && d.Allowed && !d.Unmetered {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after restart: %+v, %v", d, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	s, err := l.State(ctx)
	if err != nil || s[0].Used != 1+3+100 {
		t.Fatalf("after restart: %+v, %v; want default 104 used (1 metered, 3 unmetered written back once, 100 now)", s, err)
	}
}

// TestRedisScriptError: a real error from Redis is an error, not an outage.
func TestRedisScriptError(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	c := newClient(t, srv.Addr)
	l, _ := openRedis(t, c, limOpts{QuotaKey: "wrongtype", Costs: testCosts(t, 1000, 0, 5, time.Minute), Logger: quiet})
	ctx := context.Background()
	c.Set(ctx, "ingest:{wrongtype}:log:default", "not a stream", 0)
	d, err := l.Take(ctx, ingest.Caller{}, "videos.list")
	if err == nil || d.Allowed || d.Unmetered {
		t.Fatalf("take over a wrong key type: %+v, %v; want a plain error", d, err)
	}
}

// TestRedisPersistence: a Redis without AOF or RDB is reported as keeping
// nothing; with AOF on, as keeping its data.
func TestRedisPersistence(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	c := newClient(t, srv.Addr)
	l, _ := openRedis(t, c, limOpts{QuotaKey: "persist", Costs: testCosts(t, 1000, 0, 5, time.Minute), Logger: quiet})
	ctx := context.Background()
	if kept, detail, err := l.Persistence(ctx); err != nil || kept {
		t.Fatalf("test server (--save '' --appendonly no): kept %v, %q, %v; want not kept", kept, detail, err)
	}
	if err := c.ConfigSet(ctx, "appendonly", "yes").Err(); err != nil {
		t.Fatal(err)
	}
	if kept, detail, err := l.Persistence(ctx); err != nil || !kept || detail != "AOF" {
		t.Fatalf("with appendonly yes: kept %v, %q, %v; want kept, AOF", kept, detail, err)
	}
	// Turning AOF on starts a rewrite in a child process that writes into
	// the server's directory: it must be done before the test's temporary
	// directory is removed (it failed 1 run in ~100: "directory not empty").
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		info, err := c.Info(ctx, "persistence").Result()
		if err == nil && strings.Contains(info, "aof_rewrite_in_progress:0") && strings.Contains(info, "aof_rewrite_scheduled:0") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the AOF rewrite did not end within 10 s: %v", err)
		}
	}
}

// TestRedisWarnsWhenItForgets: a worker on a Redis that keeps nothing
// across a restart is told so, once, with how it
// keeps; on one that keeps RDB snapshots, it is not.
func TestRedisWarnsWhenItForgets(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	c := newClient(t, srv.Addr)
	var logged bytes.Buffer
	log := slog.New(slog.NewTextHandler(&logged, nil))
	l, _ := openRedis(t, c, limOpts{QuotaKey: "forgets", Costs: testCosts(t, 1000, 0, 5, time.Minute), Logger: quiet})
	ctx := context.Background()
	l.WarnForgetful(ctx, log)
	for _, want := range []string{"level=WARN", "keeps no data across a restart", "appendonly yes", "neither AOF nor RDB"} {
		if !strings.Contains(logged.String(), want) {
			t.Errorf("on a Redis without AOF or RDB, logged %q, want %q", logged.String(), want)
		}
	}
	if err := c.ConfigSet(ctx, "save", "3600 1").Err(); err != nil {
		t.Fatal(err)
	}
	logged.Reset()
	l.WarnForgetful(ctx, log)
	if logged.Len() != 0 {
		t.Errorf("on a Redis keeping RDB snapshots, logged %q, want nothing", logged.String())
	}
}

// TestRedisBlockFromTheLimitersClock: workers whose clocks are minutes off
// block the pool until the next Los Angeles midnight of the limiter's
// clock, not their own; the block is in the ledger, and after FLUSHALL the
// refill from the ledger brings it back.
func TestRedisBlockFromTheLimitersClock(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	ctx := context.Background()
	costs := testCosts(t, 1000, 0, 5, time.Minute)
	var blocks []ingest.Block
	// The limiter's clock stands 2 minutes before midnight in Los Angeles;
	// a worker 5 minutes fast thinks the day has turned.
	want := ingest.UpstreamReset(time.Now())
	offset := time.Until(want.Add(-2 * time.Minute))
	for _, skew := range []time.Duration{5 * time.Minute, -5 * time.Minute, 0} {
		l, _ := openRedis(t, newClient(t, srv.Addr), limOpts{QuotaKey: "skew", Costs: costs, Logger: quiet,
			ClockOffset: offset, Clock: clock.Func(func() time.Time { return time.Now().Add(offset + skew) })})
		until, err := l.Block(ctx, "search", "")
		if err != nil {
			t.Fatal(err)
		}
		if !until.Equal(want) {
			t.Fatalf("worker %s off: block until %s, want the limiter's next Los Angeles midnight %s", skew, until, want)
		}
		blocks = append(blocks, ingest.Block{QuotaKey: "skew", Pool: "search", Until: until, At: time.Now(), Op: "search.list"})
	}
	// The ledger of a worker that spent and met the block.
	var calls []ingest.Call
	w, _ := openRedis(t, newClient(t, srv.Addr), limOpts{QuotaKey: "skew", Costs: costs, Logger: quiet, Ledger: "w",
		Recall: func(context.Context) (ingest.Recalled, error) {
			return ingest.Recalled{Calls: calls, Blocks: blocks}, nil
		}})
	d, err := w.Take(ctx, ingest.Caller{}, "videos.list")
	if err != nil || !d.Allowed {
		t.Fatalf("videos.list: %+v, %v", d, err)
	}
	calls = append(calls, ingest.Call{QuotaKey: "skew", ID: d.ID, At: d.At, Op: d.Op, Charges: d.Charges})
	if err := w.Heartbeat(ctx); err != nil {
		t.Fatal(err)
	}
	if r, err := redistest.Do(srv.Addr, "FLUSHALL"); err != nil || r != "+OK" {
		t.Fatalf("FLUSHALL: %q %v", r, err)
	}
	// The worker notices the loss, vouches for itself and refills: the
	// block comes back with its calls.
	d, err = w.Take(ctx, ingest.Caller{}, "search.list")
	if err != nil || d.Allowed || !pool(d, "search").BlockedUntil.Equal(blocks[0].Until) {
		t.Fatalf("search.list after FLUSHALL: %+v, %v; want refused, blocked until %s", d, err, blocks[0].Until)
	}
	if s, _ := w.State(ctx); s[0].Used != 1 {
		t.Fatalf("after the refill: default used %d, want 1", s[0].Used)
	}
}

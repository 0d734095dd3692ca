package quota_test

// The limiter under faults (issue 8's fault table), each on a real
// redis-server: data lost in whole or in part, a snapshot that is behind,
// a hung server, an answer that comes after the client gave up, a clock
// that jumps, a ledger row that cannot be read, a server out of memory.
// Every pool here has a capacity of 100 units over one hour, so every call
// of a test falls in one window: the units admitted in the whole test are
// the units admitted in the window, and each test counts them exactly.

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/costs"
	"github.com/ingestworks/ingest/internal/rig/redistest"
	"github.com/ingestworks/ingest/quota"
)

// capacity is the pool of every fault test: limit 100, no reserve.
const capacity = 100

// faultCosts is one pool of 100 units over an hour (and the Los Angeles
// calendar day with day), cheap calls failing open up to 3 units.
func faultCosts(t testing.TB, day bool) *ingest.Costs {
	t.Helper()
	zone := ""
	if day {
		zone = ", day: America/Los_Angeles"
	}
	c, err := costs.Parse("fault costs", []byte(`pools:
  default: {limit: 100, window: 1h`+zone+`, fail_open: {max_cost: 1, budget: 3}}
operations:
  videos.list: {default: 1}
`))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// logs keeps what a limiter logged, with the time of each record.
type logs struct {
	mu   sync.Mutex
	recs []slog.Record
}

func (l *logs) Enabled(context.Context, slog.Level) bool { return true }
func (l *logs) WithAttrs([]slog.Attr) slog.Handler       { return l }
func (l *logs) WithGroup(string) slog.Handler            { return l }
func (l *logs) Handle(_ context.Context, r slog.Record) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.recs = append(l.recs, r.Clone())
	return nil
}

// find returns the records whose message contains s.
func (l *logs) find(s string) []slog.Record {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []slog.Record
	for _, r := range l.recs {
		if strings.Contains(r.Message, s) {
			out = append(out, r)
		}
	}
	return out
}

// host is one worker as a host runs it: a ledger of its own (a database),
// and a limiter process on it.
type host struct {
	t      *testing.T
	name   string
	addr   string // the Redis it talks to
	l      *quota.Redis
	log    *logs
	opts   limOpts
	client redis.UniversalClient
	// beats: each process heartbeats from its start until the next one
	// starts, as every process of the binary does, a cron run's too
	beats bool
	stop  context.CancelFunc

	mu     sync.Mutex
	ledger []ingest.Call
	extra  []ingest.Call // rows the ledger also returns (malformed ones)
}

func newHost(t *testing.T, addr, key string, costs *ingest.Costs, name string, tweak func(*limOpts)) *host {
	t.Helper()
	h := hostOn(t, newClient(t, addr), key, costs, name, tweak)
	h.addr = addr
	return h
}

// hostOn is newHost on a client of the test's: a Redis Cluster's.
func hostOn(t *testing.T, client redis.UniversalClient, key string, costs *ingest.Costs, name string, tweak func(*limOpts)) *host {
	t.Helper()
	h := &host{t: t, name: name, log: &logs{}, client: client}
	h.opts = limOpts{QuotaKey: key, Costs: costs, Ledger: name, Where: "host-" + name + ":/" + name + ".db",
		Logger: slog.New(h.log), Timeout: 2 * time.Second, Recall: h.recall, Notes: &notes{m: map[string]string{}}}
	if tweak != nil {
		tweak(&h.opts)
	}
	h.restart()
	created(t, h.l)
	return h
}

// restart is the host's next process on the same database: a cron job's
// next run. It keeps the ledger and its notes, and nothing else.
func (h *host) restart() {
	h.t.Helper()
	l, err := newRedis(h.client, h.opts)
	if err != nil {
		h.t.Fatal(err)
	}
	h.l = l
	if h.beats {
		if h.stop != nil {
			h.stop()
		}
		ctx, stop := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() { defer close(done); l.Run(ctx) }()
		h.stop = func() { stop(); <-done }
		h.t.Cleanup(h.stop)
	}
}

// notes is a ledger's notebook, kept across the host's processes.
type notes struct {
	mu sync.Mutex
	m  map[string]string
}

func (n *notes) Note(_ context.Context, name, value string) error {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.m[name] = value
	return nil
}

func (n *notes) Noted(_ context.Context, name string) (string, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.m[name], nil
}

func (h *host) recall(context.Context) (ingest.Recalled, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return ingest.Recalled{Calls: append(append([]ingest.Call(nil), h.ledger...), h.extra...)}, nil
}

// record writes an admitted call into the host's ledger, as the job does.
func (h *host) record(d ingest.Decision) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.ledger = append(h.ledger, ingest.Call{ID: d.ID, At: d.At, Op: d.Op, Charges: d.Charges, Unmetered: d.Unmetered})
}

// take decides one videos.list; an error or an unmetered admission fails
// the test.
func (h *host) take() ingest.Decision {
	h.t.Helper()
	d, err := h.l.Take(context.Background(), ingest.Caller{}, "videos.list")
	if err != nil {
		h.t.Fatalf("%s: take: %v", h.name, err)
	}
	if d.Unmetered {
		h.t.Fatalf("%s: take: admitted unmetered %+v while Redis answers", h.name, d)
	}
	if d.Allowed {
		h.record(d)
	}
	return d
}

// admitted is the units this host was admitted, metered.
func (h *host) admitted() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	n := 0
	for _, c := range h.ledger {
		if !c.Unmetered {
			n += int(c.Charges[0].Units)
		}
	}
	return n
}

func (h *host) heartbeat() {
	h.t.Helper()
	if err := h.l.Heartbeat(context.Background()); err != nil {
		h.t.Fatalf("%s: heartbeat: %v", h.name, err)
	}
}

// spendN takes n calls, each of which must be admitted.
func (h *host) spendN(n int) {
	h.t.Helper()
	for i := range n {
		if d := h.take(); !d.Allowed {
			h.t.Fatalf("%s: call %d of %d refused: %+v", h.name, i+1, n, d)
		}
	}
}

// fill takes calls from hosts in turn until ten in a row are refused, and
// returns how many were admitted.
func fill(t *testing.T, hosts ...*host) int {
	t.Helper()
	n, refused := 0, 0
	for i := 0; refused < 10; i++ {
		if i > 2*capacity {
			t.Fatalf("over %d calls and the pool never filled", 2*capacity)
		}
		if hosts[i%len(hosts)].take().Allowed {
			n, refused = n+1, 0
		} else {
			refused++
		}
	}
	return n
}

func total(hosts ...*host) int {
	n := 0
	for _, h := range hosts {
		n += h.admitted()
	}
	return n
}

func do(t *testing.T, addr string, args ...string) string {
	t.Helper()
	r, err := redistest.Do(addr, args...)
	if err != nil || strings.HasPrefix(r, "-") {
		t.Fatalf("%s: %q %v", strings.Join(args, " "), r, err)
	}
	return r
}

// pass waits until d has passed on the clock of the Redis server at addr,
// by which the limiter measures cadences, heartbeats and quiet periods.
func pass(t *testing.T, addr string, d time.Duration) {
	t.Helper()
	now := func() time.Time {
		n, err := redistest.Time(addr)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	awaitClock(t, now, now().Add(d))
}

// twoSpenders: hosts a and b, 30 calls each in turn.
func twoSpenders(t *testing.T, addr, key string, costs *ingest.Costs) (a, b *host) {
	t.Helper()
	a = newHost(t, addr, key, costs, "a", nil)
	b = newHost(t, addr, key, costs, "b", nil)
	for range 30 {
		a.spendN(1)
		b.spendN(1)
	}
	return a, b
}

// del deletes one key, which must have been there: a test of a lost key
// that deletes nothing would pass for nothing.
func del(t *testing.T, addr, key string) {
	t.Helper()
	if r := do(t, addr, "DEL", key); r != ":1" {
		t.Fatalf("DEL %s: %q, want :1 (the key must exist)", key, r)
	}
}

func used(t *testing.T, l *quota.Redis) int64 {
	t.Helper()
	s, err := l.State(context.Background())
	if err != nil {
		t.Fatalf("state: %v", err)
	}
	return s[0].Used
}

// hungHost is a host on a client made as the worker makes it, with the
// default limiter timeout of 250 ms.
func hungHost(t *testing.T, srv *redistest.Server, key string, tweaks ...func(*limOpts)) *host {
	t.Helper()
	c, err := quota.NewClient("redis://"+srv.Addr, quota.DefaultTimeout)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	h := &host{t: t, name: "w", addr: srv.Addr, log: &logs{}}
	h.opts = limOpts{QuotaKey: key, Costs: faultCosts(t, false), Ledger: "w",
		Logger: slog.New(h.log), Recall: h.recall}
	for _, tweak := range tweaks {
		tweak(&h.opts)
	}
	if h.opts.Timeout > quota.DefaultTimeout { // the client's sockets wait as long as the limiter
		if c, err = quota.NewClient("redis://"+srv.Addr, h.opts.Timeout); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
	}
	h.l, err = newRedis(c, h.opts)
	if err != nil {
		t.Fatal(err)
	}
	created(t, h.l)
	return h
}

// steadyTimeout is the timeout of what a fault test does around its fault
// (setup before it, recovery after it): no loaded machine reaches it, so
// that only the fault's own deadline can fail the test.
const steadyTimeout = time.Minute

// spendSteadily takes n calls, each of which must be admitted, through a
// limiter of the host's ledger with its own client and steadyTimeout: the
// setup before a fault, as an earlier process of the host made it. The
// host's own limiter keeps the fault's timeout for the fault.
func (h *host) spendSteadily(n int) {
	h.t.Helper()
	h.steadily(func(l *quota.Redis) {
		for i := range n {
			d, err := l.Take(context.Background(), ingest.Caller{}, "videos.list")
			if err != nil || !d.Allowed || d.Unmetered {
				h.t.Fatalf("%s: setup call %d of %d: %+v, %v; want admitted, metered", h.name, i+1, n, d, err)
			}
			h.record(d)
		}
	})
}

// steadily runs f on h's limiter with steadyTimeout, on a client of its own
// closed when f returns: for the setup around a fault.
func (h *host) steadily(f func(*quota.Redis)) {
	h.t.Helper()
	o := h.opts
	o.Timeout = steadyTimeout
	c, err := quota.NewClient("redis://"+h.addr, o.Timeout)
	if err != nil {
		h.t.Fatal(err)
	}
	defer c.Close()
	l, err := newRedis(c, o)
	if err != nil {
		h.t.Fatal(err)
	}
	f(l)
}

// stop hangs the server (SIGSTOP) until the returned func resumes it.
func stop(t *testing.T, srv *redistest.Server) (resume func()) {
	t.Helper()
	if err := srv.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	var once sync.Once
	resume = func() {
		once.Do(func() {
			if err := srv.Signal(syscall.SIGCONT); err != nil {
				t.Error(err)
			}
		})
	}
	t.Cleanup(resume)
	return resume
}

// TestFaultOOM: Redis answers every write with an OOM error (maxmemory
// reached, noeviction). That is an answer, not an outage: cheap calls are
// refused, never admitted unmetered, on a full pool and on one with room.
func TestFaultOOM(t *testing.T) {
	t.Parallel()
	for _, spent := range []int{capacity, 60} {
		t.Run(fmt.Sprintf("used=%d", spent), func(t *testing.T) {
			t.Parallel()
			srv := redistest.Start(t)
			key := quotaKey(t)
			// The worker's own client, with a timeout no busy machine
			// reaches: the fault here is an answer, not a hang.
			h := hungHost(t, srv, key, func(o *limOpts) { o.Timeout = steadyTimeout })
			h.spendSteadily(spent)
			c := newClient(t, srv.Addr)
			oom(t, c)
			// A write that fits would be Redis answering yes, metered
			// like any other; at half its memory none fits.
			errs := 0
			for i := range 10 {
				d, err := h.l.Take(context.Background(), ingest.Caller{}, "videos.list")
				switch {
				case d.Unmetered:
					t.Fatalf("call %d out of memory: admitted unmetered %+v, %v; Redis answered, so it must be metered or refused", i+1, d, err)
				case err != nil:
					errs++
				case d.Allowed:
					h.record(d)
				}
			}
			if errs == 0 && spent < capacity {
				t.Fatal("no call met the OOM error: the test proves nothing")
			}
			if err := c.ConfigSet(context.Background(), "maxmemory", "0").Err(); err != nil {
				t.Fatal(err)
			}
			after := fill(t, h)
			t.Logf("OOM at %d used: 10 cheap calls, %d refused with the OOM error, none unmetered; %d after memory was freed: %d / %d",
				spent, errs, after, h.admitted(), capacity)
			if h.admitted() != capacity || used(t, h.l) != capacity {
				t.Fatalf("admitted %d, limiter counts %d; want %d", h.admitted(), used(t, h.l), capacity)
			}
		})
	}
}

func mixedCosts(t testing.TB) *ingest.Costs {
	t.Helper()
	c, err := costs.Parse("mixed costs", []byte(`pools:
  short: {limit: 3, window: 1s}
  long:  {limit: 5, window: 1h}
operations:
  videos.list: {short: 1, long: 1}
`))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// testMixedWindows: one call drawing from pools with different windows;
// each pool is trimmed by its own window, whichever comes first in the
// call.
func testMixedWindows(t *testing.T, h harness) {
	ctx := context.Background()
	var last time.Time // the last admission, by the limiter's clock
	call := func(l limiter, order ...string) bool {
		t.Helper()
		var cs []ingest.Charge
		for _, p := range order {
			cs = append(cs, ingest.Charge{Pool: p, Units: 1})
		}
		d, err := l.Spend(ctx, ingest.Caller{}, "mixed", cs)
		if err != nil || d.Unmetered {
			t.Fatalf("spend %v: %+v, %v", order, d, err)
		}
		if d.Allowed {
			last = d.At
		}
		return d.Allowed
	}
	count := func(l limiter, n int, order ...string) (k int) {
		for range n {
			if call(l, order...) {
				k++
			}
		}
		return k
	}
	costs := mixedCosts(t)
	// Short first: the long pool keeps its hour.
	l := h.open(t, quotaKey(t)+".short_first", costs)
	// past the short window of the last admission
	next := func() { h.await(t, last.Add(time.Second+time.Millisecond)) }
	got := []int{count(l, 4, "short", "long")}
	next()
	got = append(got, count(l, 4, "short", "long"))
	next()
	got = append(got, count(l, 4, "short", "long"))
	if fmt.Sprint(got) != "[3 2 0]" {
		t.Errorf("short pool first, 4 calls three times a second apart: admitted %v, want [3 2 0] (long holds 5 an hour)", got)
	}
	// Long first: the short pool frees after its second.
	l = h.open(t, quotaKey(t)+".long_first", costs)
	got = []int{count(l, 4, "long", "short")}
	next()
	got = append(got, count(l, 4, "long", "short"))
	if fmt.Sprint(got) != "[3 2]" {
		t.Errorf("long pool first, 4 calls twice a second apart: admitted %v, want [3 2] (short frees after 1s)", got)
	}
}

func TestFaultMixedWindowsRedis(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	testMixedWindows(t, redisHarness(func(t *testing.T) redis.UniversalClient { return newClient(t, srv.Addr) }))
}

func TestFaultMixedWindowsSQLite(t *testing.T) {
	t.Parallel()
	testMixedWindows(t, sqliteHarness(t.TempDir()))
}

func fillSQLite(t *testing.T, l *quota.SQLite) int {
	t.Helper()
	n := 0
	for range 2 * capacity {
		d := take(t, l, "videos.list")
		if !d.Allowed {
			return n
		}
		n++
	}
	t.Fatalf("over %d calls and the pool never filled", 2*capacity)
	return n
}

// TestSQLiteFaultMalformedLedgerRow: the embedded limiter skips ledger rows
// it cannot read, refills the good ones, and decides on.

func testClockBack(t *testing.T, h harness) {
	key, costs := quotaKey(t), faultCosts(t, false)
	l := h.open(t, key, costs)
	var last ingest.Decision
	for range 60 {
		last = spend(t, l, 1)
	}
	back := h.at(t, key, costs, -time.Hour)
	n := 0
	for range 2 * capacity {
		d := spend(t, back, 1)
		if !d.Allowed {
			break
		}
		if n++; d.At.Before(last.At) || !idLess(last.ID, d.ID) {
			t.Fatalf("a worker an hour behind decided %s at %s, after %s at %s: the clock went back", d.ID, d.At, last.ID, last.At)
		}
	}
	if n != 40 {
		t.Fatalf("a worker an hour behind was admitted %d, want 40 (60 of 100 in the window)", n)
	}
}

func TestFaultClockBackRedis(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	testClockBack(t, redisHarness(func(t *testing.T) redis.UniversalClient { return newClient(t, srv.Addr) }))
}

func TestFaultClockBackSQLite(t *testing.T) {
	t.Parallel()
	testClockBack(t, sqliteHarness(t.TempDir()))
}

// oom sets maxmemory to what the server uses now, with noeviction: every
// write is then refused with an OOM error reply.
func oom(t *testing.T, c *redis.Client) {
	t.Helper()
	ctx := context.Background()
	if err := c.ConfigSet(ctx, "maxmemory-policy", "noeviction").Err(); err != nil {
		t.Fatal(err)
	}
	info, err := c.Info(ctx, "memory").Result()
	if err != nil {
		t.Fatal(err)
	}
	var mem int64
	for _, line := range strings.Split(info, "\r\n") {
		if v, ok := strings.CutPrefix(line, "used_memory:"); ok {
			mem, _ = strconv.ParseInt(v, 10, 64)
		}
	}
	// Half of what it holds, not all of it: memory that a freed client
	// buffer gives back would otherwise let a write through by chance.
	if err := c.ConfigSet(ctx, "maxmemory", strconv.FormatInt(mem/2, 10)).Err(); err != nil {
		t.Fatal(err)
	}
	if err := c.Set(ctx, "probe", strings.Repeat("x", 4096), 0).Err(); err == nil || !strings.HasPrefix(err.Error(), "OOM") {
		t.Fatalf("a write at maxmemory %d: %v, want an OOM error", mem/2, err)
	}
}

// hungTakes takes n cheap calls from a hung server. Each returns within a
// bound that tells a hang from the limiter timeout; a hung Redis is an
// outage, so the first go ahead unmetered within the pool's fail_open
// budget (written to the ledger, as the job does) and the rest are refused
// with ErrUnavailable.
func hungTakes(t *testing.T, h *host, n int) (unmetered int, slowest time.Duration) {
	t.Helper()
	const bound = 2 * time.Second // hang detection, not a timing assertion
	for i := range n {
		start := time.Now()
		d, err := h.l.Take(context.Background(), ingest.Caller{}, "videos.list")
		took := time.Since(start)
		slowest = max(slowest, took)
		switch {
		case took > bound:
			t.Fatalf("call %d to a hung Redis took %s; want within %s", i+1, took, bound)
		case err == nil && d.Allowed && d.Unmetered:
			unmetered++
			h.record(d)
		case !errors.Is(err, quota.ErrUnavailable) || d.Allowed:
			t.Fatalf("call %d to a hung Redis: %+v, %v; want unmetered or ErrUnavailable", i+1, d, err)
		}
	}
	return unmetered, slowest
}

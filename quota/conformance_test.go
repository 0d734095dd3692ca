package quota_test

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/costs"
	"github.com/ingestworks/ingest/quota"
	"github.com/ingestworks/ingest/wiring"
)

// limiter is a backend in every role, as a program wires it.
type limiter = wiring.Limiter

// harness opens limiters of one backend. Two limiters opened with the same
// key share one store, like two processes.
type harness struct {
	open func(t *testing.T, key string, costs *ingest.Costs) limiter
	// at opens a limiter whose world is offset from now: the limiter's
	// clock and the worker's move together.
	at func(t *testing.T, key string, costs *ingest.Costs, offset time.Duration) limiter
	// as opens a limiter of the worker whose database's ledger id is
	// ledger. databases says whether workers of several databases can
	// share the backend (Redis); the embedded limiter lives in one
	// database, whose every process is one worker.
	as        func(t *testing.T, key string, costs *ingest.Costs, ledger string) limiter
	databases bool
	// plant writes a lease held by someone else that nobody renews.
	plant func(t *testing.T, key, name, token string, ttl time.Duration)
	// holder reads the token of a lease, "" when free.
	holder func(t *testing.T, key, name string) string
	// now reads the clock the backend decides by: Redis's TIME,
	// PostgreSQL's clock_timestamp(), the test's for SQLite.
	now func(t *testing.T) time.Time
	// drive moves the clock the backend decides by on to at, where that
	// clock is the worker's (SQLite's); nil where it is a server's, which
	// no test can move.
	drive func(t *testing.T, at time.Time)
	// leases is the harness of the lease tests, whose renewals are the
	// runtime's timers and run on real time; nil: this one.
	leases *harness
}

// await returns once the backend's clock reads at or after at: the test's
// clock is moved there; a server's is waited for (docs/testing.md).
func (h harness) await(t *testing.T, at time.Time) {
	t.Helper()
	if h.drive != nil {
		h.drive(t, at)
		return
	}
	awaitClock(t, func() time.Time { return h.now(t) }, at)
}

// hangFree is the limiter timeout of the harnesses, and their clients'.
// Their tests hang no server, so the only silence they meet is a busy
// machine's, which a shorter bound would read as an outage (admitting
// calls unmetered, or refusing them). A limiter that truly hangs fails at
// the package's -timeout, with every goroutine's stack.
const hangFree = 10 * time.Minute

// drift is each test's move of a server's clock, added to it at each
// decision (quota.Options.ClockOffset): nothing until the test moves it.
type drift func(t *testing.T) func() time.Duration

// noDrift is a server's own clock.
func noDrift(*testing.T) func() time.Duration { return func() time.Duration { return 0 } }

// driven is the harness build makes on a server's clock each test moves
// on: a window passes when the test says so, however busy the machine.
// The lease tests stay on the server's own clock, as a lease's renewals
// are the runtime's timers.
func driven(build func(drift) harness) harness {
	var moves sync.Map // *testing.T -> *atomic.Int64, ns
	of := func(t *testing.T) *atomic.Int64 {
		v, _ := moves.LoadOrStore(t, new(atomic.Int64))
		return v.(*atomic.Int64)
	}
	h := build(func(t *testing.T) func() time.Duration {
		m := of(t)
		return func() time.Duration { return time.Duration(m.Load()) }
	})
	leases := build(noDrift)
	h.leases = &leases
	h.drive = func(t *testing.T, at time.Time) {
		// The servers decide in whole milliseconds, a reading's fraction
		// cut: the move is rounded up and a millisecond more, so that the
		// server's next decision is at or after at.
		if n := h.now(t); at.After(n) {
			of(t).Add(int64(at.Sub(n).Truncate(time.Millisecond) + 2*time.Millisecond))
		}
	}
	return h
}

// awaitClock polls now until it reads at or after at, failing when the
// host's clock has gone ten seconds past the span it expected to wait.
func awaitClock(t testing.TB, now func() time.Time, at time.Time) {
	t.Helper()
	deadline := time.Now().Add(time.Until(at) + 10*time.Second)
	for {
		n := now()
		if !n.Before(at) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the server's clock reads %s, still before %s", n.Format(time.StampMilli), at.Format(time.StampMilli))
		}
		time.Sleep(min(at.Sub(n), 20*time.Millisecond))
	}
}

// testCosts builds a costs file: pool default with capacity limit-reserve,
// pool search with searches calls, all with one window.
func testCosts(t testing.TB, limit, reserve, searches int, window time.Duration) *ingest.Costs {
	t.Helper()
	y := fmt.Sprintf(`pools:
  default: {limit: %d, reserve: %d, window: %s, fail_open: {max_cost: 1, budget: 3}}
  search:  {limit: %d, reserve: 0, window: %s}
operations:
  videos.list: {default: 1}
  search.list: {default: 100, search: 1}
`, limit, reserve, window, searches, window)
	c, err := costs.Parse("test costs", []byte(y))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// quotaKey makes a distinct key per test, safe inside a hash tag.
func quotaKey(t testing.TB) string {
	return strings.NewReplacer("/", ".", "{", "", "}", "", " ", "_").Replace(t.Name())
}

func spend(t *testing.T, l limiter, units int64) ingest.Decision {
	t.Helper()
	d, err := l.Spend(context.Background(), ingest.Caller{}, "test", []ingest.Charge{{Pool: "default", Units: units}})
	if err != nil {
		t.Fatalf("spend %d: %v", units, err)
	}
	if d.Unmetered {
		t.Fatalf("spend %d: unmetered decision %+v: the limiter was unreachable", units, d)
	}
	return d
}

func take(t *testing.T, l limiter, op string) ingest.Decision {
	t.Helper()
	d, err := l.Take(context.Background(), ingest.Caller{}, op)
	if err != nil {
		t.Fatalf("take %s: %v", op, err)
	}
	if d.Unmetered {
		t.Fatalf("take %s: unmetered decision %+v", op, d)
	}
	return d
}

func state(t *testing.T, l limiter) map[string]ingest.PoolState {
	t.Helper()
	ps, err := l.State(context.Background())
	if err != nil {
		t.Fatalf("state: %v", err)
	}
	m := map[string]ingest.PoolState{}
	for _, p := range ps {
		m[p.Pool] = p
	}
	return m
}

func pool(d ingest.Decision, name string) ingest.PoolState {
	for _, p := range d.Pools {
		if p.Pool == name {
			return p
		}
	}
	return ingest.PoolState{}
}

func idOrder(id string) (int64, int64) {
	a, b, _ := strings.Cut(id, "-")
	ms, _ := strconv.ParseInt(a, 10, 64)
	seq, _ := strconv.ParseInt(b, 10, 64)
	return ms, seq
}

func idLess(a, b string) bool {
	am, as := idOrder(a)
	bm, bs := idOrder(b)
	return am < bm || (am == bm && as < bs)
}

// runConformance holds both backends to the limiter's promises.
func runConformance(t *testing.T, h harness) {
	tests := []struct {
		name   string
		f      func(t *testing.T, h harness)
		leases bool
	}{
		{name: "AdmitsToCapacity", f: testAdmitsToCapacity},
		{name: "AllOrNothing", f: testAllOrNothing},
		{name: "RetryAtExact", f: testRetryAtExact},
		{name: "CostTooLarge", f: testCostTooLarge},
		{name: "BlockShared", f: testBlockShared},
		{name: "DayFallBack", f: testDayFallBack},
		{name: "DaySpringForward", f: testDaySpringForward},
		{name: "DayOutlivesTheWindow", f: testDayOutlivesTheWindow},
		{name: "ConfigAgreement", f: testConfigAgreement},
		{name: "Refund", f: testRefund},
		{name: "State", f: testState},
		{name: "OtherWorkers", f: testOtherWorkers},
		{name: "RefillIdempotent", f: testRefill},
		{name: "IDsIncrease", f: testIDs},
		{name: "Boundary", f: testBoundary},
		{name: "LockOneHolder", f: testLockOneHolder, leases: true},
		{name: "LockReleasedOnlyByHolder", f: testLockHolderOnly, leases: true},
		{name: "LockExpiresAndRenews", f: testLockExpiry, leases: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := h
			if tc.leases && h.leases != nil {
				h = *h.leases
			}
			tc.f(t, h)
		})
	}
}

func testAdmitsToCapacity(t *testing.T, h harness) {
	l := h.open(t, quotaKey(t), testCosts(t, 300, 50, 5, time.Minute))
	for i, want := range []bool{true, true, false} {
		if d := spend(t, l, 100); d.Allowed != want {
			t.Fatalf("100-unit call %d: allowed %v, want %v (%+v)", i, d.Allowed, want, d)
		}
	}
	for i := range 50 {
		if d := take(t, l, "videos.list"); !d.Allowed {
			t.Fatalf("1-unit call %d refused with %d used: %+v", i, pool(d, "default").Used, d)
		}
	}
	d := take(t, l, "videos.list")
	if got := pool(d, "default"); d.Allowed || got.Used != 250 || got.Remaining != 0 || d.RetryAt.IsZero() || d.ID != "" {
		t.Fatalf("call past capacity: got %+v, want refused, used 250, remaining 0, a RetryAt, no id", d)
	}
}

func testAllOrNothing(t *testing.T, h harness) {
	l := h.open(t, quotaKey(t), testCosts(t, 1000, 0, 2, time.Minute))
	for range 2 {
		if d := take(t, l, "search.list"); !d.Allowed || d.Units("default") != 100 || d.Units("search") != 1 {
			t.Fatalf("search.list: got %+v, want admitted charging 100 default + 1 search", d)
		}
	}
	// search is full, default has room: refused, nothing charged.
	d := take(t, l, "search.list")
	if d.Allowed || pool(d, "default").Used != 200 || pool(d, "search").Used != 2 || len(d.Charges) != 0 {
		t.Fatalf("search.list with search full: got %+v, want refused with default 200, search 2 untouched", d)
	}
	// A fresh key: default nearly full, search has room.
	l = h.open(t, quotaKey(t)+".b", testCosts(t, 1000, 0, 2, time.Minute))
	spend(t, l, 901)
	d = take(t, l, "search.list")
	if d.Allowed || pool(d, "search").Used != 0 || pool(d, "default").Used != 901 {
		t.Fatalf("search.list with default full: got %+v, want refused with search 0, default 901", d)
	}
	s := state(t, l)
	if s["default"].Used != 901 || s["search"].Used != 0 {
		t.Fatalf("state after refusal: got %+v, want default 901, search 0", s)
	}
}

// testRetryAtExact: with entries of 1, 100 and 40 units, a 100-unit call
// needs 91 units to leave, which happens when the 100-unit entry leaves,
// not when the oldest (1-unit) entry leaves. A server's clock that ran past
// the 100-unit entry's departure before the refusal (a busy machine) shows
// nothing: the refusal's own time says so, and the test runs again on a
// window twice as long.
func testRetryAtExact(t *testing.T, h harness) {
	for window := 2 * time.Second; !retryAtIn(t, h, window); window *= 2 {
		if window >= time.Minute {
			t.Fatalf("the calls took longer than the window %s: too slow to show anything", window)
		}
		t.Logf("the refusal came after the 100-unit entry left the window %s: again with %s", window, 2*window)
	}
}

// retryAtIn is testRetryAtExact over window; false when the refusal came
// too late to show anything.
func retryAtIn(t *testing.T, h harness, window time.Duration) bool {
	l := h.open(t, quotaKey(t)+window.String(), testCosts(t, 150, 0, 5, window))
	a := spend(t, l, 1)
	h.await(t, a.At.Add(400*time.Millisecond))
	b := spend(t, l, 100)
	h.await(t, b.At.Add(100*time.Millisecond))
	spend(t, l, 40)
	d := spend(t, l, 100)
	want := b.At.Add(window)
	if !d.At.Before(want) {
		return false
	}
	if d.Allowed || !d.RetryAt.Equal(want) {
		t.Fatalf("100 units over 141 used: got allowed %v RetryAt %s, want refused until %s (the 100-unit entry at %s leaves; oldest+window %s is wrong)",
			d.Allowed, d.RetryAt.Format(time.StampMilli), want.Format(time.StampMilli), b.At.Format(time.StampMilli), a.At.Add(window).Format(time.StampMilli))
	}
	if got := pool(d, "default").FreeAt; !got.Equal(want) {
		t.Fatalf("pool FreeAt: got %s, want %s", got, want)
	}
	// Once the 1-unit entry has left, still refused; then admitted exactly
	// from RetryAt on.
	h.await(t, a.At.Add(window))
	for {
		d := spend(t, l, 100)
		if d.Allowed {
			if d.At.Before(want) {
				t.Fatalf("admitted at %s, before RetryAt %s", d.At, want)
			}
			return true
		}
		if !d.At.Before(want) {
			t.Fatalf("refused at %s, at or after RetryAt %s: %+v", d.At, want, d)
		}
		if !d.RetryAt.Equal(want) {
			t.Fatalf("RetryAt moved: got %s, want %s", d.RetryAt, want)
		}
		h.await(t, d.At.Add(10*time.Millisecond))
	}
}

func testCostTooLarge(t *testing.T, h harness) {
	l := h.open(t, quotaKey(t), testCosts(t, 300, 50, 5, time.Minute))
	ctx := context.Background()
	for _, tc := range []struct {
		name    string
		charges []ingest.Charge
	}{
		{"above limit-reserve", []ingest.Charge{{Pool: "default", Units: 251}}},
		{"unknown pool", []ingest.Charge{{Pool: "nope", Units: 1}}},
		{"one pool of two", []ingest.Charge{{Pool: "default", Units: 1}, {Pool: "search", Units: 6}}},
	} {
		d, err := l.Spend(ctx, ingest.Caller{}, "test", tc.charges)
		if !errors.Is(err, quota.ErrCostTooLarge) {
			t.Errorf("%s: got %+v, %v; want ErrCostTooLarge", tc.name, d, err)
		}
	}
	if _, err := l.Take(ctx, ingest.Caller{}, "no.such.op"); err == nil || errors.Is(err, quota.ErrCostTooLarge) {
		t.Errorf("unknown op: got %v, want an error naming the operation", err)
	}
	if s := state(t, l); s["default"].Used != 0 {
		t.Errorf("errors charged %d units", s["default"].Used)
	}
	if d := spend(t, l, 250); !d.Allowed {
		t.Errorf("exactly limit-reserve: refused %+v", d)
	}
}

func testBlockShared(t *testing.T, h harness) {
	key := quotaKey(t)
	costs := testCosts(t, 1000, 0, 5, time.Minute)
	a := h.open(t, key, costs)
	until, err := a.Block(context.Background(), "search", "")
	if err != nil {
		t.Fatal(err)
	}
	want := ingest.UpstreamReset(h.now(t))
	if !until.Equal(want) {
		t.Fatalf("block until %s, want the next midnight America/Los_Angeles %s", until, want)
	}
	b := h.open(t, key, costs)
	if d := take(t, b, "search.list"); d.Allowed || !d.RetryAt.Equal(until) || !pool(d, "search").BlockedUntil.Equal(until) {
		t.Fatalf("search.list on another instance: got %+v, want refused until %s", d, until)
	}
	if d := take(t, b, "videos.list"); !d.Allowed {
		t.Fatalf("videos.list does not draw from search: refused %+v", d)
	}
	if s := state(t, b); !s["search"].BlockedUntil.Equal(until) || !s["default"].BlockedUntil.IsZero() {
		t.Fatalf("state: got %+v, want search blocked until %s", s, until)
	}
	if _, err := a.Block(context.Background(), "nope", ""); err == nil {
		t.Fatal("block of an unknown pool: no error")
	}
	later := h.at(t, key, costs, until.Sub(h.now(t))+time.Second)
	if d := take(t, later, "search.list"); !d.Allowed {
		t.Fatalf("after the block: refused %+v", d)
	}
}

// testState reads the pools' state between calls that leave the window at
// known times. A read the machine delays past a departure shows nothing:
// the backend's clock after each read says whether it came in time, and a
// read that did not is tried again with a window twice as long.
func testState(t *testing.T, h harness) {
	for window := 2 * time.Second; !stateIn(t, h, window); window *= 2 {
		if window >= time.Minute {
			t.Fatalf("the reads came later than the window %s: too slow to show anything", window)
		}
		t.Logf("a read came after a call left the window %s: again with %s", window, 2*window)
	}
}

// testOtherWorkers: State counts, in each pool, the workers of other
// databases that spent in its window, from their ledgers: never the
// limiter's own ledger's spends, whichever process of its database made
// them, and a worker no longer once its last spend there left the window.
// On the embedded limiter, every process on its database is one worker.
func testOtherWorkers(t *testing.T, h harness) {
	for window := 2 * time.Second; !othersIn(t, h, window); window *= 2 {
		if window >= time.Minute {
			t.Fatalf("the reads came later than the window %s: too slow to show anything", window)
		}
		t.Logf("a read came after a call left the window %s: again with %s", window, 2*window)
	}
}

// othersIn is testOtherWorkers over window; false when a read came too
// late to show anything.
func othersIn(t *testing.T, h harness, window time.Duration) bool {
	key, costs := quotaKey(t)+window.String(), testCosts(t, 1000, 0, 5, window)
	a, again := h.as(t, key, costs, "db-a"), h.as(t, key, costs, "db-a")
	first := spend(t, a, 10)
	take(t, again, "search.list") // default and search, by another process of a's database
	b := h.as(t, key, costs, "db-b")
	last := spend(t, b, 10) // default only
	got := map[string]map[string]int{}
	for name, l := range map[string]limiter{"a": a, "again": again, "b": b} {
		got[name] = map[string]int{}
		for pool, st := range state(t, l) {
			got[name][pool] = st.Others
		}
	}
	if !h.now(t).Before(first.At.Add(window)) {
		return false
	}
	want := map[string]map[string]int{"a": {"default": 0, "search": 0, "stats": 0}, "again": {"default": 0, "search": 0, "stats": 0}, "b": {"default": 0, "search": 0, "stats": 0}}
	if h.databases {
		want["a"]["default"], want["again"]["default"] = 1, 1
		want["b"]["default"], want["b"]["search"] = 1, 1
	}
	for name := range want {
		for pool, n := range want[name] {
			if _, ok := got[name][pool]; !ok && n == 0 {
				continue
			}
			if got[name][pool] != n {
				t.Errorf("%s: pool %s counts %d other workers, want %d (all: %v)", name, pool, got[name][pool], n, got[name])
			}
		}
	}
	h.await(t, last.At.Add(window))
	for pool, st := range state(t, a) {
		if st.Others != 0 {
			t.Errorf("once every spend left the window, pool %s counts %d other workers, want none", pool, st.Others)
		}
	}
	return true
}

// stateIn is testState over window; false when a read came too late to
// show anything.
func stateIn(t *testing.T, h harness, window time.Duration) bool {
	l := h.open(t, quotaKey(t)+window.String(), testCosts(t, 300, 50, 5, window))
	s := state(t, l)
	if d := s["default"]; d.Limit != 300 || d.Reserve != 50 || d.Used != 0 || d.Remaining != 250 || !d.FreeAt.IsZero() {
		t.Fatalf("empty default: got %+v", d)
	}
	first := spend(t, l, 100)
	h.await(t, first.At.Add(window/4))
	take(t, l, "search.list")
	second := spend(t, l, 30)
	s = state(t, l)
	// 230 used: the dearest call (100) does not fit until the first 100
	// units leave.
	want := first.At.Add(window)
	if !h.now(t).Before(want) {
		return false
	}
	if d := s["default"]; d.Used != 230 || d.Remaining != 20 || !d.FreeAt.Equal(want) {
		t.Fatalf("default: got %+v, want used 230, remaining 20, free at %s", d, want)
	}
	if d := s["search"]; d.Used != 1 || d.Remaining != 4 || !d.FreeAt.IsZero() {
		t.Fatalf("search: got %+v, want used 1, remaining 4, free now", d)
	}
	h.await(t, want)
	d := state(t, l)["default"]
	if !h.now(t).Before(second.At.Add(window)) {
		return false
	}
	if d.Used != 130 || !d.FreeAt.IsZero() {
		t.Fatalf("after the first call left: got %+v, want used 130, free now", d)
	}
	return true
}

func testRefill(t *testing.T, h harness) {
	costs := testCosts(t, 1000, 0, 10, time.Minute)
	src := h.open(t, quotaKey(t)+".src", costs)
	var calls []ingest.Call
	for _, op := range []string{"videos.list", "search.list", "videos.list", "search.list", "videos.list"} {
		d := take(t, src, op)
		calls = append(calls, ingest.Call{ID: d.ID, At: d.At, Op: op, Charges: d.Charges})
	}
	calls = append(calls,
		ingest.Call{ID: fmt.Sprintf("%d-u0000abcd", h.now(t).UnixMilli()), Op: "videos.list", Unmetered: true,
			Charges: []ingest.Charge{{Pool: "default", Units: 1}}}, // written back after an outage
		ingest.Call{ID: "bogus", Op: "videos.list", Charges: []ingest.Charge{{Pool: "default", Units: 1}}},                      // skipped with a warning
		ingest.Call{ID: "1-1", At: time.UnixMilli(1), Op: "videos.list", Charges: []ingest.Charge{{Pool: "default", Units: 1}}}) // long gone
	// A fresh key stands for a store that lost its data, a moment later:
	// its own first id is not one of the calls it is given back.
	h.await(t, calls[4].At.Add(time.Millisecond))
	dst := h.open(t, quotaKey(t), costs)
	last := take(t, dst, "videos.list")
	for i, want := range []int{6, 0} {
		n, err := dst.Refill(context.Background(), ingest.Recalled{Calls: calls})
		if err != nil || n != want {
			t.Fatalf("refill %d: got %d, %v; want %d", i+1, n, err, want)
		}
		if s := state(t, dst); s["default"].Used != 205 || s["search"].Used != 2 {
			t.Fatalf("after refill %d: got %+v, want default 205 (the unmetered call counted once), search 2", i+1, s)
		}
	}
	d := take(t, dst, "videos.list")
	for _, c := range append(calls[:5], ingest.Call{ID: last.ID}) {
		if !idLess(c.ID, d.ID) {
			t.Fatalf("id after refill %s is not above refilled id %s", d.ID, c.ID)
		}
	}
	// A block in the ledger comes back with the refill.
	until := ingest.UpstreamReset(h.now(t))
	if _, err := dst.Refill(context.Background(), ingest.Recalled{Blocks: []ingest.Block{{Pool: "search", Until: until}}}); err != nil {
		t.Fatal(err)
	}
	if s := state(t, dst); !s["search"].BlockedUntil.Equal(until) {
		t.Fatalf("after refilling a block: search %+v, want blocked until %s", s["search"], until)
	}
}

func testIDs(t *testing.T, h harness) {
	key := quotaKey(t)
	costs := testCosts(t, 100000, 0, 5, time.Minute)
	var mu sync.Mutex
	var ids []string
	var wg sync.WaitGroup
	for w := range 4 {
		l := h.open(t, key, costs)
		wg.Go(func() {
			var prev ingest.Decision
			for i := range 40 {
				d, err := l.Take(context.Background(), ingest.Caller{}, "videos.list")
				if err != nil || !d.Allowed || d.Unmetered {
					t.Errorf("worker %d call %d: %+v %v", w, i, d, err)
					return
				}
				if i > 0 && (d.At.Before(prev.At) || !idLess(prev.ID, d.ID)) {
					t.Errorf("worker %d: %s at %s after %s at %s: clock or id went back", w, d.ID, d.At, prev.ID, prev.At)
				}
				if ms, _ := idOrder(d.ID); ms != d.At.UnixMilli() {
					t.Errorf("id %s does not carry its time %d", d.ID, d.At.UnixMilli())
				}
				prev = d
				mu.Lock()
				ids = append(ids, d.ID)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	sort.Slice(ids, func(i, j int) bool { return idLess(ids[i], ids[j]) })
	for i := 1; i < len(ids); i++ {
		if ids[i] == ids[i-1] {
			t.Fatalf("id %s given twice", ids[i])
		}
	}
	if len(ids) != 160 {
		t.Fatalf("got %d ids, want 160", len(ids))
	}
}

// testBoundary: a full burst just before a fixed-window boundary and another
// just after admit, together, exactly the capacity: a fixed window would
// admit twice that.
func testBoundary(t *testing.T, h harness) {
	// The window is short so that the wait for the server's clock is; a
	// machine too busy to fit the bursts in one tries a window twice as
	// long, so that it slows the test and never fails it.
	for window := 2 * time.Second; ; window *= 2 {
		if boundaryIn(t, h, window) {
			return
		}
		if window >= time.Minute {
			t.Fatalf("the bursts took more than the window %s: too slow to show anything", window)
		}
		t.Logf("the bursts took more than the window %s: again with %s", window, 2*window)
	}
}

// boundaryIn runs testBoundary's bursts around a boundary of window; false
// when they took longer than the window, which shows nothing.
func boundaryIn(t *testing.T, h harness, window time.Duration) bool {
	l := h.open(t, quotaKey(t)+window.String(), testCosts(t, 160, 10, 5, window))
	now := h.now(t)
	boundary := now.Add(window).Truncate(window)
	if boundary.Sub(now) < 300*time.Millisecond {
		boundary = boundary.Add(window)
	}
	var first, last time.Time
	burst := func() (units int64) {
		for range 16 {
			d := spend(t, l, 10)
			if d.Allowed {
				units += 10
				if first.IsZero() {
					first = d.At
				}
			}
			last = d.At
		}
		return units
	}
	h.await(t, boundary.Add(-150*time.Millisecond))
	before := burst()
	h.await(t, boundary.Add(50*time.Millisecond))
	after := burst()
	if last.Sub(first) >= window {
		return false
	}
	if before+after != 150 {
		t.Fatalf("bursts around the boundary admitted %d + %d units, want exactly 150 together", before, after)
	}
	h.await(t, first.Add(window))
	if d := take(t, l, "videos.list"); !d.Allowed && !d.At.Before(first.Add(window)) {
		t.Fatalf("a window after the first burst: refused %+v", d)
	}
	return true
}

// testConfigAgreement: a worker whose costs give a pool another window is
// refused before it spends, with both values named; apply replaces the
// stored settings on purpose.
func testConfigAgreement(t *testing.T, h harness) {
	ctx := context.Background()
	key := quotaKey(t)
	a := h.open(t, key, testCosts(t, 1000, 0, 5, time.Hour))
	take(t, a, "videos.list")
	b := h.open(t, key, testCosts(t, 1000, 0, 5, 2*time.Hour))
	var cerr *quota.ConfigError
	if err := b.CheckConfig(ctx); !errors.As(err, &cerr) || cerr.Pool != "default" || cerr.Field != "window" ||
		cerr.Limiter != "1h0m0s" || cerr.CostsValue != "2h0m0s" {
		t.Fatalf("CheckConfig with another window: got %v, want a ConfigError naming default, window, 1h0m0s and 2h0m0s", err)
	}
	if _, err := b.Take(ctx, ingest.Caller{}, "videos.list"); !errors.As(err, &cerr) {
		t.Fatalf("Take with another window: got %v, want a ConfigError", err)
	}
	changes, err := b.ApplyConfig(ctx)
	if err != nil || len(changes) != 2 || !strings.Contains(changes[0].String(), "window 1h0m0s, day (none) -> limit 1000, reserve 0, window 2h0m0s") {
		t.Fatalf("ApplyConfig: %v, %v; want both pools changed from window 1h0m0s", changes, err)
	}
	if d := take(t, b, "videos.list"); !d.Allowed {
		t.Fatalf("after apply: refused %+v", d)
	}
	if err := a.CheckConfig(ctx); !errors.As(err, &cerr) || cerr.Limiter != "2h0m0s" {
		t.Fatalf("the first worker after apply: got %v, want a ConfigError (the limiter now holds 2h)", err)
	}
	// The first worker's next call comes right after an admission of the
	// second (which the Redis limiter keeps a hot record of: hot_admits).
	if _, err := a.Take(ctx, ingest.Caller{}, "videos.list"); !errors.As(err, &cerr) {
		t.Fatalf("the first worker's Take after apply: got %v, want a ConfigError", err)
	}
}

// testRefund: a call given back (it never reached the upstream) leaves the
// window; giving it back twice changes nothing; retry times follow.
func testRefund(t *testing.T, h harness) {
	ctx := context.Background()
	l := h.open(t, quotaKey(t), testCosts(t, 300, 0, 5, time.Minute))
	a, b := spend(t, l, 100), spend(t, l, 150)
	spend(t, l, 50)
	if d := spend(t, l, 100); d.Allowed || !d.RetryAt.Equal(a.At.Add(time.Minute)) {
		t.Fatalf("full: %+v, want refused until the first call leaves %s", d, a.At.Add(time.Minute))
	}
	call := ingest.Call{ID: b.ID, At: b.At, Op: "test", Charges: b.Charges}
	for i := range 2 {
		if err := l.Refund(ctx, call); err != nil {
			t.Fatalf("refund %d: %v", i+1, err)
		}
		if s := state(t, l)["default"]; s.Used != 150 {
			t.Fatalf("after refund %d: used %d, want 150 (300 less the 150 given back)", i+1, s.Used)
		}
	}
	if d := spend(t, l, 100); !d.Allowed {
		t.Fatalf("after the refund: %+v, want admitted", d)
	}
	if d := spend(t, l, 100); d.Allowed || !d.RetryAt.Equal(a.At.Add(time.Minute)) {
		t.Fatalf("full again: %+v, want refused until the first call leaves %s", d, a.At.Add(time.Minute))
	}
}

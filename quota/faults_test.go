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
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/internal/redistest"
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
	c, err := ingest.ParseCosts("fault costs", []byte(`pools:
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

// host is one worker as a host runs it: a limiter with a ledger of its own.
type host struct {
	t    *testing.T
	name string
	l    *quota.Redis
	log  *logs

	mu     sync.Mutex
	ledger []ingest.Call
	extra  []ingest.Call // rows the ledger also returns (malformed ones)
}

func newHost(t *testing.T, addr, key string, costs *ingest.Costs, name string, tweak func(*quota.Options)) *host {
	t.Helper()
	h := &host{t: t, name: name, log: &logs{}}
	o := quota.Options{QuotaKey: key, Costs: costs, Worker: name, Logger: slog.New(h.log),
		Timeout: 2 * time.Second, Recall: h.recall}
	if tweak != nil {
		tweak(&o)
	}
	l, err := quota.NewRedis(newClient(t, addr), o)
	if err != nil {
		t.Fatal(err)
	}
	h.l = l
	return h
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
	d, err := h.l.Take(context.Background(), "videos.list")
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

// twoSpenders: hosts a and b, 30 calls each in turn, and a heartbeat each
// (as Run does every Beat), so that both copies of the register are fresh.
func twoSpenders(t *testing.T, addr, key string, costs *ingest.Costs) (a, b *host) {
	t.Helper()
	a = newHost(t, addr, key, costs, "a", nil)
	b = newHost(t, addr, key, costs, "b", nil)
	for range 30 {
		a.spendN(1)
		b.spendN(1)
	}
	a.heartbeat()
	b.heartbeat()
	return a, b
}

// waitingForB: two spenders (twoSpenders), then Redis loses everything
// (FLUSHALL), and A's first call after the loss is refused: the limiter now
// waits for B's ledger.
func waitingForB(t *testing.T, addr, key string, costs *ingest.Costs) (a, b *host) {
	t.Helper()
	a, b = twoSpenders(t, addr, key, costs)
	do(t, addr, "FLUSHALL")
	if d := a.take(); d.Allowed {
		t.Fatalf("after the loss: admitted before B refilled: %+v", d)
	}
	return a, b
}

// redisAt is a limiter whose clock (the script's and the worker's) runs
// offset ahead.
func redisAt(t *testing.T, addr, key string, costs *ingest.Costs, offset time.Duration) *quota.Redis {
	t.Helper()
	l, err := quota.NewRedis(newClient(t, addr), quota.Options{QuotaKey: key, Costs: costs, Logger: quiet,
		ClockOffset: offset, Now: func() time.Time { return time.Now().Add(offset) }})
	if err != nil {
		t.Fatal(err)
	}
	return l
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

// TestFaultFlushallTwoHosts: two hosts with their own ledgers; Redis is
// flushed; host A notices first and names both from its fresh copy of the
// register. A keeps spending: nothing is admitted until B, at its next
// heartbeat, has refilled; then the pool resumes and stops at capacity.
func TestFaultFlushallTwoHosts(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	key, costs := quotaKey(t), faultCosts(t, false)
	a, b := twoSpenders(t, srv.Addr, key, costs)
	do(t, srv.Addr, "FLUSHALL")
	lostAt := time.Now().Truncate(time.Millisecond)
	for i := range 20 {
		d := a.take()
		if d.Allowed {
			t.Fatalf("A's call %d after FLUSHALL admitted before B refilled: %+v", i+1, d)
		}
		if w := pool(d, "default").WaitUntil; w.Before(lostAt.Add(time.Hour)) {
			t.Fatalf("A's call %d after FLUSHALL: waits until %s, want no earlier than a window after the loss %s", i+1, w, lostAt.Add(time.Hour))
		}
	}
	b.heartbeat() // B notices and refills: the pool resumes for A alone
	after := fill(t, a)
	after += fill(t, a, b)
	t.Logf("FLUSHALL, two hosts: 60 before, 0 while waiting for B, %d after B refilled: %d / %d", after, total(a, b), capacity)
	if after != 40 || total(a, b) != capacity || a.admitted() != 70 {
		t.Fatalf("admitted %d after B refilled, %d in the window; want 40 and %d", after, total(a, b), capacity)
	}
	if u := used(t, a.l); u != capacity {
		t.Fatalf("the limiter counts %d used, want %d", u, capacity)
	}
}

// TestFaultNewcomerEmptyLedger: Redis loses its data while the spender S,
// which spent 60, is idle; the first to call after the loss is a newcomer
// N with an empty ledger. N cannot know, so it adopts the empty Redis and
// spends; S notices at its next heartbeat (the counter went back, or its
// generation changed) and refills. What N was admitted before that
// heartbeat is the over-admission's bound: the window holds
// max(capacity, 60 + k) when N got k calls before S's heartbeat.
func TestFaultNewcomerEmptyLedger(t *testing.T) {
	t.Parallel()
	for _, k := range []int{20, 50, 70} {
		t.Run(fmt.Sprintf("k=%d", k), func(t *testing.T) {
			t.Parallel()
			srv := redistest.Start(t)
			key, costs := quotaKey(t), faultCosts(t, false)
			s := newHost(t, srv.Addr, key, costs, "s", nil)
			s.spendN(60)
			s.heartbeat()
			do(t, srv.Addr, "FLUSHALL")
			n := newHost(t, srv.Addr, key, costs, "n", nil)
			n.spendN(k) // nothing tells N that anything was lost
			s.heartbeat()
			fill(t, n, s)
			want := max(capacity, 60+k)
			t.Logf("newcomer got %d before the spender's heartbeat: %d / %d admitted", k, total(s, n), capacity)
			if got := total(s, n); got != want || got > capacity+k {
				t.Fatalf("admitted %d in the window, want %d (at most capacity + the %d the newcomer got before the heartbeat)", got, want, k)
			}
			if u := used(t, s.l); u != int64(want) {
				t.Fatalf("the limiter counts %d used, want %d", u, want)
			}
		})
	}
	// As a daemon runs: S heartbeats every 100 ms (Run), N calls every
	// millisecond. The bound is measured, not set: the calls N got before
	// S's heartbeat logged that it refilled.
	t.Run("Run", func(t *testing.T) {
		t.Parallel()
		srv := redistest.Start(t)
		key, costs := quotaKey(t), faultCosts(t, false)
		s := newHost(t, srv.Addr, key, costs, "s", func(o *quota.Options) { o.Beat = 100 * time.Millisecond })
		s.spendN(60)
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() { defer close(done); s.l.Run(ctx) }()
		t.Cleanup(func() { cancel(); <-done })
		time.Sleep(150 * time.Millisecond) // a beat or two: S's copy of the register is fresh
		n := newHost(t, srv.Addr, key, costs, "n", nil)
		do(t, srv.Addr, "FLUSHALL")
		flushed := time.Now()
		var at []time.Time
		for end := time.Now().Add(500 * time.Millisecond); time.Now().Before(end); time.Sleep(time.Millisecond) {
			if d := n.take(); d.Allowed {
				at = append(at, d.At)
			}
		}
		var noticed time.Time
		for _, r := range s.log.find("refilled the limiter from the ledger") {
			if r.Time.After(flushed) {
				noticed = r.Time
				break
			}
		}
		if noticed.IsZero() {
			t.Fatal("the spender never refilled: its heartbeat did not notice the loss")
		}
		k := 0
		for _, a := range at {
			if a.Before(noticed) {
				k++
			}
		}
		got := total(s, n)
		t.Logf("Run with Beat 100 ms: newcomer got %d in the %s before the spender's heartbeat refilled (%d in all): %d / %d admitted, bound %d",
			k, noticed.Sub(flushed).Round(time.Millisecond), len(at), got, capacity, capacity+k)
		if got > capacity+k {
			t.Fatalf("admitted %d in the window, more than capacity + the %d the newcomer got before the heartbeat", got, k)
		}
	})
}

// TestFaultStaleSnapshot: Redis restarts from an RDB snapshot taken 40
// calls ago: its state key, epoch included, comes back as it was. The
// workers remember a higher call counter, so the first call notices, the
// pool waits until both hosts refilled, and the window holds.
func TestFaultStaleSnapshot(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	a, b, after := wentBack(t, srv.Addr,
		func() { do(t, srv.Addr, "SAVE") },
		func(a *host) {
			srv.RestartFromSnapshot(t)
			if u := used(t, a.l); u != 20 {
				t.Fatalf("after the restart the limiter holds %d, want the snapshot's 20", u)
			}
		})
	t.Logf("stale snapshot: 60 before (20 in the snapshot), %d after: %d / %d", after, total(a, b), capacity)
	if after != 40 || total(a, b) != capacity || a.admitted() != 70 {
		t.Fatalf("admitted %d after the restart, %d in the window; want 40 and %d", after, total(a, b), capacity)
	}
}

// TestFaultKeysGoBackInPlace: the state and the log go back to an older
// copy on the running server (RESTORE of a backup, no restart), while the
// script still remembers the newer states it wrote: the counter went back,
// which is a loss, as after a restart from a stale snapshot. Nothing is
// admitted until B refilled, then 100 / 100.
func TestFaultKeysGoBackInPlace(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	ctx, c := context.Background(), newClient(t, srv.Addr)
	var keys []string
	old := map[string]string{}
	a, b, after := wentBack(t, srv.Addr,
		func() {
			key := quotaKey(t)
			keys = []string{"ingest:{" + key + "}:state", "ingest:{" + key + "}:log:default"}
			for _, k := range keys {
				v, err := c.Dump(ctx, k).Result()
				if err != nil {
					t.Fatalf("DUMP %s: %v", k, err)
				}
				old[k] = v
			}
		},
		func(*host) {
			for _, k := range keys {
				if err := c.RestoreReplace(ctx, k, time.Hour, old[k]).Err(); err != nil {
					t.Fatalf("RESTORE %s: %v", k, err)
				}
			}
		})
	t.Logf("keys back in place: 60 before (20 in the copy), %d after: %d / %d", after, total(a, b), capacity)
	if after != 40 || total(a, b) != capacity {
		t.Fatalf("admitted %d after the keys went back, %d in the window; want 40 and %d", after, total(a, b), capacity)
	}
}

// wentBack: hosts A and B spend 20 calls in turn, then the test keeps a
// copy (keep), they spend 40 more and heartbeat, and the keys go back to
// the copy (restore). The workers remember a higher counter than the keys
// hold: A is refused 10 times before B refills; then A, and A and B, fill
// the pool. It returns the hosts and how many calls were admitted after.
func wentBack(t *testing.T, addr string, keep func(), restore func(a *host)) (a, b *host, after int) {
	t.Helper()
	key, costs := quotaKey(t), faultCosts(t, false)
	a = newHost(t, addr, key, costs, "a", nil)
	b = newHost(t, addr, key, costs, "b", nil)
	for range 10 {
		a.spendN(1)
		b.spendN(1)
	}
	keep()
	for range 20 {
		a.spendN(1)
		b.spendN(1)
	}
	a.heartbeat()
	b.heartbeat()
	restore(a)
	for i := range 10 {
		if d := a.take(); d.Allowed {
			t.Fatalf("A's call %d after the keys went back admitted before B refilled: %+v", i+1, d)
		}
	}
	b.heartbeat() // B notices its counter went back and refills: the pool resumes for A alone
	after = fill(t, a)
	after += fill(t, a, b)
	return a, b, after
}

// TestFaultPartialLoss: one key is lost (evicted, deleted): the state
// (the clock, the counter and every pool's account), or a pool's log.
// Neither lets a call through beyond capacity.
func TestFaultPartialLoss(t *testing.T) {
	t.Parallel()
	for _, kind := range []string{"state", "log:default"} {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			srv := redistest.Start(t)
			key, costs := quotaKey(t), faultCosts(t, false)
			a, b := twoSpenders(t, srv.Addr, key, costs)
			del(t, srv.Addr, "ingest:{"+key+"}:"+kind)
			after := fill(t, a, b)
			t.Logf("%s key deleted: 60 before, %d after: %d / %d", kind, after, total(a, b), capacity)
			if after != 40 || total(a, b) != capacity {
				t.Fatalf("admitted %d after deleting the %s key, %d in the window; want 40 and %d", after, kind, total(a, b), capacity)
			}
			if u := used(t, a.l); u != capacity {
				t.Fatalf("the limiter counts %d used, want %d", u, capacity)
			}
		})
	}
}

// hungHost is a host on a client made as the worker makes it, with the
// default limiter timeout of 250 ms.
func hungHost(t *testing.T, srv *redistest.Server, key string, tweaks ...func(*quota.Options)) *host {
	t.Helper()
	c, err := quota.NewClient("redis://"+srv.Addr, quota.DefaultTimeout)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	h := &host{t: t, name: "w", log: &logs{}}
	o := quota.Options{QuotaKey: key, Costs: faultCosts(t, false), Worker: "w",
		Logger: slog.New(h.log), Recall: h.recall}
	for _, tweak := range tweaks {
		tweak(&o)
	}
	h.l, err = quota.NewRedis(c, o)
	if err != nil {
		t.Fatal(err)
	}
	return h
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

// hungTakes takes n cheap calls from a hung server: each must be refused
// with ErrUnavailable (the request went out, so the outcome is unknown:
// never unmetered, although the pool allows cheap calls to fail open),
// within a bound that tells a hang from the timeout.
func hungTakes(t *testing.T, h *host, n int) time.Duration {
	t.Helper()
	const bound = 2 * time.Second // hang detection, not a timing assertion
	var slowest time.Duration
	for i := range n {
		start := time.Now()
		d, err := h.l.Take(context.Background(), "videos.list")
		took := time.Since(start)
		slowest = max(slowest, took)
		if d.Allowed || d.Unmetered || !errors.Is(err, quota.ErrUnavailable) || took > bound {
			t.Fatalf("call %d to a hung Redis: %+v, %v after %s; want ErrUnavailable, not admitted, within %s", i+1, d, err, took, bound)
		}
	}
	return slowest
}

// TestFaultRedisHung: a SIGSTOPped redis-server accepts connections and
// never answers. Every call returns within about the limiter timeout,
// refused, never admitted unmetered.
func TestFaultRedisHung(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	h := hungHost(t, srv, quotaKey(t))
	h.spendN(10)
	resume := stop(t, srv)
	slowest := hungTakes(t, h, 5)
	resume()
	t.Logf("hung Redis: 5 cheap calls refused, none unmetered, slowest %s (limiter timeout %s)", slowest, quota.DefaultTimeout)
	var d ingest.Decision
	var err error
	for range 20 { // the server catches up with what was sent while it hung
		if d, err = h.l.Take(context.Background(), "videos.list"); err == nil {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if err != nil || !d.Allowed || d.Unmetered {
		t.Fatalf("after SIGCONT: %+v, %v; want admitted, metered", d, err)
	}
	h.record(d)
}

// TestFaultAnswerAfterGiveUp: the requests reach a hung server, the client
// gives up at its timeout, then the server resumes and runs the scripts
// (Redis reads a closed connection's request before its end). Those calls
// were refused to the caller, never made unmetered; the ones Redis ran are
// given back when the worker reconciles at its next answer, so the window
// then holds exactly what the caller was admitted.
func TestFaultAnswerAfterGiveUp(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	h := hungHost(t, srv, quotaKey(t))
	h.spendN(97)
	resume := stop(t, srv)
	hungTakes(t, h, 5)
	resume()
	var u int64
	for range 40 { // until the server has run what it was sent
		u = used(t, h.l)
		time.Sleep(50 * time.Millisecond)
		if used(t, h.l) == u {
			break
		}
	}
	ghosts := int(u) - 97
	after := fill(t, h)
	t.Logf("answers after give-up: 5 refused to the caller, %d of them run by Redis later and given back; caller admitted %d metered, limiter counts %d / %d",
		ghosts, h.admitted(), used(t, h.l), capacity)
	if ghosts < 0 || ghosts > 3 || h.admitted() != capacity || after != 3 || used(t, h.l) != capacity {
		t.Fatalf("limiter ran %d calls the caller was refused, then admitted %d more; caller has %d, limiter counts %d: want %d both",
			ghosts, after, h.admitted(), used(t, h.l), capacity)
	}
}

// TestFaultClockJump: the Redis host's clock steps 25 hours forward and
// back (ClockOffset on one limiter, whose own clock stays right). The
// reading is suspect: the decision is taken at the last good time, the log
// is not trimmed, and afterwards the window is still full.
func TestFaultClockJump(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	key, costs := quotaKey(t), faultCosts(t, false)
	a := newHost(t, srv.Addr, key, costs, "a", nil)
	a.spendN(capacity)
	j := newHost(t, srv.Addr, key, costs, "j", func(o *quota.Options) { o.ClockOffset = 25 * time.Hour })
	for i := range 5 {
		d := j.take()
		if d.Allowed || d.At.After(time.Now().Add(time.Minute)) {
			t.Fatalf("call %d with TIME 25 h ahead: %+v; want refused at the last good time", i+1, d)
		}
	}
	if len(j.log.find("clock jumped ahead")) == 0 {
		t.Error("the suspect clock was not logged")
	}
	if d := a.take(); d.Allowed || d.At.After(time.Now().Add(time.Minute)) {
		t.Fatalf("after the clock came back: %+v; want refused, the window still full, the clock not moved ahead", d)
	}
	c := newClient(t, srv.Addr)
	if n, err := c.XLen(context.Background(), "ingest:{"+key+"}:log:default").Result(); err != nil || n != capacity {
		t.Fatalf("log holds %d entries, %v; want %d: the jump trimmed it", n, err, capacity)
	}
	t.Logf("clock jump +25h and back: %d / %d admitted, log kept", total(a, j), capacity)
	if total(a, j) != capacity || used(t, a.l) != capacity {
		t.Fatalf("admitted %d, limiter counts %d; want %d", total(a, j), used(t, a.l), capacity)
	}
}

// malformed are ledger rows whose id cannot be read.
var malformed = []ingest.Call{
	{ID: "bogus", Op: "videos.list", Charges: []ingest.Charge{{Pool: "default", Units: 1}}},
	{ID: "1700000000000-abc", Op: "videos.list", Charges: []ingest.Charge{{Pool: "default", Units: 1}}},
	{ID: "0-0", Op: "videos.list", Charges: []ingest.Charge{{Pool: "default", Units: 1}}},
	{ID: "", Op: "videos.list", Charges: []ingest.Charge{{Pool: "default", Units: 1}}},
}

// TestFaultMalformedLedgerRow: after a loss the worker refills from a
// ledger that holds rows it cannot read among good ones: those are skipped
// with a warning, the good ones go back, decisions go on.
func TestFaultMalformedLedgerRow(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	key, costs := quotaKey(t), faultCosts(t, false)
	w := newHost(t, srv.Addr, key, costs, "w", nil)
	w.spendN(60)
	w.extra = malformed
	w.heartbeat()
	do(t, srv.Addr, "FLUSHALL")
	after := fill(t, w)
	t.Logf("malformed ledger rows: 60 before, %d after the refill: %d / %d", after, w.admitted(), capacity)
	if after != 40 || used(t, w.l) != capacity {
		t.Fatalf("admitted %d after the loss, limiter counts %d; want 40 and %d", after, used(t, w.l), capacity)
	}
	if len(w.log.find("ledger row skipped")) == 0 || len(w.log.find("ledger rows skipped in all")) == 0 {
		t.Fatal("the skipped rows were not logged")
	}
}

// TestFaultLedgerRowFromTheFuture: a worker whose clock runs 5 minutes
// fast fails open during an outage; its unmetered calls carry ids from its
// own clock. When Redis answers again they are written back: they must
// count, and decisions must go on for every worker.
func TestFaultLedgerRowFromTheFuture(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	key, costs := quotaKey(t), faultCosts(t, false)
	w := newHost(t, srv.Addr, key, costs, "w", nil)
	w.spendN(60)
	fast := time.Now().Add(5 * time.Minute).UnixMilli()
	n, err := w.l.Refill(context.Background(), ingest.Recalled{Calls: []ingest.Call{
		{ID: fmt.Sprintf("%d-u0000beef", fast), Op: "videos.list", Unmetered: true, Charges: []ingest.Charge{{Pool: "default", Units: 1}}},
	}})
	if err != nil || n != 1 {
		t.Fatalf("refill of the unmetered call: %d, %v", n, err)
	}
	other := newHost(t, srv.Addr, key, costs, "other", nil)
	d, err := other.l.Take(context.Background(), "videos.list")
	if err != nil || !d.Allowed {
		t.Fatalf("another worker after the write-back: %+v, %v; want admitted", d, err)
	}
	other.record(d)
	after := fill(t, w, other)
	if got := 60 + 1 + 1 + after; got != capacity || used(t, w.l) != capacity {
		t.Fatalf("admitted %d metered + 1 unmetered, limiter counts %d; want %d", 61+after, used(t, w.l), capacity)
	}
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
	if err := c.ConfigSet(ctx, "maxmemory", strconv.FormatInt(mem, 10)).Err(); err != nil {
		t.Fatal(err)
	}
	if err := c.Set(ctx, "probe", strings.Repeat("x", 4096), 0).Err(); err == nil || !strings.HasPrefix(err.Error(), "OOM") {
		t.Fatalf("a write at maxmemory %d: %v, want an OOM error", mem, err)
	}
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
			h := hungHost(t, srv, key) // the worker's own client
			h.spendN(spent)
			c := newClient(t, srv.Addr)
			oom(t, c)
			// Memory moves a little as calls come and go: a write that
			// fits is Redis answering yes, and is metered like any other.
			errs := 0
			for i := range 10 {
				d, err := h.l.Take(context.Background(), "videos.list")
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

// TestFaultStaleRegisterCopy: a worker whose copy of the register is older
// than Fresh cannot vouch for who spent: a worker that started spending
// after that copy is not in it. After a loss the pool then waits (for the
// window and the calendar day, or an operator's restore), even when every
// worker that refills by itself has done so.
func TestFaultStaleRegisterCopy(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	key, costs := quotaKey(t), faultCosts(t, true)
	a := newHost(t, srv.Addr, key, costs, "a", func(o *quota.Options) { o.Fresh = 300 * time.Millisecond })
	c := newHost(t, srv.Addr, key, costs, "c", nil)
	a.spendN(30)
	a.heartbeat() // a's copy: only a
	c.spendN(30)
	time.Sleep(400 * time.Millisecond)
	do(t, srv.Addr, "FLUSHALL")
	lostAt := time.Now().Truncate(time.Millisecond)
	d := a.take()
	want := lostAt.Add(time.Hour)
	if reset := ingest.UpstreamReset(lostAt); reset.After(want) {
		want = reset
	}
	if w := pool(d, "default").WaitUntil; d.Allowed || w.Before(want) {
		t.Fatalf("after the loss with a stale copy of the register: %+v; want refused until at least %s (the window and the day)", d, want)
	}
	c.heartbeat() // c refills by itself; nobody vouched, so the wait goes on
	for i := range 10 {
		if d := [2]*host{a, c}[i%2].take(); d.Allowed {
			t.Fatalf("call %d after the loss: admitted while nobody vouched for who spent: %+v", i+1, d)
		}
	}
	if _, err := a.l.Restore(context.Background(), []ingest.Recalled{{Calls: a.ledger}, {Calls: c.ledger}}); err != nil {
		t.Fatal(err)
	}
	after := fill(t, a, c)
	t.Logf("stale register copy: 60 before, 0 until restore, %d after: %d / %d", after, total(a, c), capacity)
	if after != 40 || total(a, c) != capacity {
		t.Fatalf("admitted %d after the restore, %d in the window; want 40 and %d", after, total(a, c), capacity)
	}
}

// TestFaultLogExpiryRenewed: the expiries of the log and of the state are
// renewed as the pool is used (every half margin, not at every call), so
// that a busy log never expires under its account, nor the account under
// its log. Here both TTLs are nearly spent (as after a day of use); a call
// 40 s later by the limiter's clock renews them.
func TestFaultLogExpiryRenewed(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	key, costs := quotaKey(t), faultCosts(t, false)
	c := newClient(t, srv.Addr)
	ctx := context.Background()
	a := newHost(t, srv.Addr, key, costs, "a", nil)
	a.spendN(1)
	keys := []string{"ingest:{" + key + "}:log:default", "ingest:{" + key + "}:state"}
	for _, k := range keys {
		if err := c.PExpire(ctx, k, 5*time.Second).Err(); err != nil {
			t.Fatal(err)
		}
	}
	later := newHost(t, srv.Addr, key, costs, "later", func(o *quota.Options) {
		o.ClockOffset = 40 * time.Second
		o.Now = func() time.Time { return time.Now().Add(40 * time.Second) }
	})
	later.spendN(1)
	for _, k := range keys {
		if ttl, err := c.PTTL(ctx, k).Result(); err != nil || ttl < time.Hour {
			t.Fatalf("%s TTL after a call 40 s later: %s, %v; want renewed to at least the window (1h)", k, ttl, err)
		}
	}
}

// TestFaultApplyAfterLoss: the state is lost while spender S is idle, an
// operator runs `quota apply` (which writes each pool's settings into a new
// state), and a newcomer N with an empty ledger calls first. The pool's log
// is still there with S's 60 calls, and the account beside it only holds
// settings: it is rebuilt from the log (by N's refill, or as a loss at the
// first spend), never taken as empty, so N gets the 40 left.
func TestFaultApplyAfterLoss(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	key, costs := quotaKey(t), faultCosts(t, false)
	s := newHost(t, srv.Addr, key, costs, "s", nil)
	s.spendN(60)
	del(t, srv.Addr, "ingest:{"+key+"}:state")
	op := newHost(t, srv.Addr, key, costs, "operator", nil)
	if _, err := op.l.ApplyConfig(context.Background()); err != nil {
		t.Fatal(err)
	}
	n := newHost(t, srv.Addr, key, costs, "n", nil)
	got := fill(t, n)
	s.heartbeat()
	t.Logf("state lost, then quota apply: 60 before, newcomer admitted %d: %d / %d", got, total(s, n), capacity)
	if total(s, n) > capacity {
		t.Fatalf("newcomer admitted %d after the loss: %d in the window, capacity %d", got, total(s, n), capacity)
	}
	// The log itself was whole: the newcomer's refill rebuilds the account
	// from it, and the rest of the capacity is there at once, no wait.
	if got != capacity-60 {
		t.Fatalf("newcomer admitted %d, want %d: the account is rebuilt from the whole log", got, capacity-60)
	}
}

// mixedCosts: a short pool (3 calls a second) and a long one (5 an hour).
func mixedCosts(t testing.TB) *ingest.Costs {
	t.Helper()
	c, err := ingest.ParseCosts("mixed costs", []byte(`pools:
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
	call := func(l limiter, order ...string) bool {
		t.Helper()
		var cs []ingest.Charge
		for _, p := range order {
			cs = append(cs, ingest.Charge{Pool: p, Units: 1})
		}
		d, err := l.Spend(ctx, "mixed", cs)
		if err != nil || d.Unmetered {
			t.Fatalf("spend %v: %+v, %v", order, d, err)
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
	got := []int{count(l, 4, "short", "long")}
	time.Sleep(1100 * time.Millisecond)
	got = append(got, count(l, 4, "short", "long"))
	time.Sleep(1100 * time.Millisecond)
	got = append(got, count(l, 4, "short", "long"))
	if fmt.Sprint(got) != "[3 2 0]" {
		t.Errorf("short pool first, 4 calls three times a second apart: admitted %v, want [3 2 0] (long holds 5 an hour)", got)
	}
	// Long first: the short pool frees after its second.
	l = h.open(t, quotaKey(t)+".long_first", costs)
	got = []int{count(l, 4, "long", "short")}
	time.Sleep(1100 * time.Millisecond)
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

// sqliteLimiter opens the embedded limiter on path with the clock now.
func sqliteLimiter(t *testing.T, path, key string, costs *ingest.Costs, now func() time.Time) *quota.SQLite {
	t.Helper()
	l, err := quota.NewSQLite(openDB(t, path, false), quota.Options{QuotaKey: key, Costs: costs, Logger: quiet, Now: now})
	if err != nil {
		t.Fatal(err)
	}
	return l
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
func TestSQLiteFaultMalformedLedgerRow(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "ledger.db")
	key, costs := quotaKey(t), faultCosts(t, false)
	src := sqliteLimiter(t, filepath.Join(t.TempDir(), "src.db"), key, costs, nil)
	var calls []ingest.Call
	for range 60 {
		d := take(t, src, "videos.list")
		calls = append(calls, ingest.Call{QuotaKey: key, ID: d.ID, At: d.At, Op: d.Op, Charges: d.Charges})
	}
	l := sqliteLimiter(t, path, key, costs, nil)
	n, err := l.Refill(context.Background(), ingest.Recalled{Calls: append(append([]ingest.Call(nil), malformed...), calls...)})
	if err != nil || n != 60 {
		t.Fatalf("refill with malformed rows: %d, %v; want the 60 good ones", n, err)
	}
	after := fillSQLite(t, l)
	t.Logf("embedded, malformed ledger rows: 60 refilled, %d after: %d / %d", after, 60+after, capacity)
	if after != 40 {
		t.Fatalf("admitted %d after the refill, want 40", after)
	}
}

// TestSQLiteFaultClockJump: one process sharing the database has a clock
// 25 hours ahead for a while, then right again. The log must not be thrown
// away by the odd clock: over the real hour, at most capacity.
func TestSQLiteFaultClockJump(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "jump.db")
	key, costs := quotaKey(t), faultCosts(t, false)
	// The boot clock both limiters share (the kernel's, in production),
	// which the step of the wall clock does not move.
	start := time.Now()
	uptime := func() (string, time.Duration, bool) { return "boot-1", time.Hour + time.Since(start), true }
	open := func(now func() time.Time) *quota.SQLite {
		l, err := quota.NewSQLite(openDB(t, path, false), quota.Options{QuotaKey: key, Costs: costs, Logger: quiet, Now: now, Uptime: uptime})
		if err != nil {
			t.Fatal(err)
		}
		return l
	}
	a := open(time.Now)
	before := fillSQLite(t, a)
	j := open(func() time.Time { return time.Now().Add(25 * time.Hour) })
	jumped := 0
	for range 5 {
		if take(t, j, "videos.list").Allowed {
			jumped++
		}
	}
	back := fillSQLite(t, a)
	t.Logf("embedded, clock +25h and back: %d before, %d at +25h, %d after: %d / %d", before, jumped, back, before+jumped+back, capacity)
	if before+jumped+back != capacity {
		t.Fatalf("admitted %d in one real hour, want %d", before+jumped+back, capacity)
	}
}

// TestFaultSecondLoss: a second loss within the window. After the first,
// both hosts refilled; neither has spent since, so neither registered
// again. The host that notices the second loss must still name the other,
// whose calls are in the window.
func TestFaultSecondLoss(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	key, costs := quotaKey(t), faultCosts(t, false)
	a, b := waitingForB(t, srv.Addr, key, costs)
	b.heartbeat()
	if u := used(t, a.l); u != 60 {
		t.Fatalf("after the first recovery the limiter counts %d, want 60", u)
	}
	a.heartbeat()
	b.heartbeat()
	do(t, srv.Addr, "FLUSHALL")
	for i := range 10 {
		if d := a.take(); d.Allowed {
			t.Fatalf("A's call %d after the second loss admitted before B refilled (%d admitted in the window): %+v", i+1, total(a, b)+fill(t, a), d)
		}
	}
	b.heartbeat()
	after := fill(t, a, b)
	t.Logf("second loss: 60 before, %d after: %d / %d", after, total(a, b), capacity)
	if total(a, b) != capacity {
		t.Fatalf("admitted %d in the window, want %d", total(a, b), capacity)
	}
}

// testClockBack: a worker whose clock is an hour behind the others'
// decides at the limiter's last time, never earlier, and sees the window
// as it is (promise 4: the clock never moves backwards).
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

// TestFaultRecoverKeyLost: while a recovery waits for host B, its record
// (who it needs, who is done) alone is lost (evicted: every key has a TTL,
// so volatile-lru may take it). The wait itself is in the state: nothing
// is admitted, not even once B has refilled, since no record can tell any
// more that every worker did; the wait holds until its time or until an
// operator restores the ledgers.
func TestFaultRecoverKeyLost(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	key, costs := quotaKey(t), faultCosts(t, false)
	a, b := waitingForB(t, srv.Addr, key, costs)
	del(t, srv.Addr, "ingest:{"+key+"}:recover")
	b.heartbeat()
	for i := range 10 {
		if d := a.take(); d.Allowed {
			t.Fatalf("A's call %d after the recovery's record was lost admitted: %+v", i+1, d)
		}
	}
	if _, err := a.l.Restore(context.Background(), []ingest.Recalled{{Calls: a.ledger}, {Calls: b.ledger}}); err != nil {
		t.Fatal(err)
	}
	after := fill(t, a, b)
	t.Logf("recovery's record lost: 60 before, 0 until restored, %d after: %d / %d", after, total(a, b), capacity)
	if total(a, b) != capacity {
		t.Fatalf("admitted %d in the window, want %d", total(a, b), capacity)
	}
}

// TestFaultStaleSnapshotNewcomer: Redis restarts from a snapshot 40 calls
// behind, and the first to spend is a newcomer N that cannot know. The
// idle hosts notice at their next heartbeat (the counter is still behind
// what they saw): from then on nothing is admitted until both refilled,
// and the window holds what N got before that heartbeat on top of the
// capacity at most; here N got 10, which still fits.
func TestFaultStaleSnapshotNewcomer(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	key, costs := quotaKey(t), faultCosts(t, false)
	a := newHost(t, srv.Addr, key, costs, "a", nil)
	b := newHost(t, srv.Addr, key, costs, "b", nil)
	for range 10 {
		a.spendN(1)
		b.spendN(1)
	}
	do(t, srv.Addr, "SAVE")
	for range 20 {
		a.spendN(1)
		b.spendN(1)
	}
	a.heartbeat()
	b.heartbeat()
	srv.RestartFromSnapshot(t)
	n := newHost(t, srv.Addr, key, costs, "n", nil)
	n.spendN(10)
	a.heartbeat() // the counter (30) is behind what a saw (60): a loss
	for i := range 10 {
		if d := n.take(); d.Allowed {
			t.Fatalf("N's call %d after A's heartbeat found the stale snapshot: admitted before B refilled: %+v", i+1, d)
		}
	}
	b.heartbeat()
	after := fill(t, n, a, b)
	t.Logf("stale snapshot, newcomer first: 60 before (20 in the snapshot), N 10 before A's heartbeat, %d after: %d / %d",
		after, total(a, b, n), capacity)
	if after != 30 || total(a, b, n) != capacity {
		t.Fatalf("admitted %d after the heartbeat, %d in the window; want 30 and %d", after, total(a, b, n), capacity)
	}
}

// TestFaultKeysReplacedBehindTheScript: a Redis whose keys are rewritten by
// something other than the script (replication after a failover and back,
// a RESTORE) decides from what the keys now hold, never from what the
// script remembers of them. Server B decided on 30 calls of the quota key;
// then its keys are replaced with server A's, which hold 60: a newcomer on
// B gets the 40 left, not the 70 that B's memory of 30 would leave.
func TestFaultKeysReplacedBehindTheScript(t *testing.T) {
	t.Parallel()
	srvA, srvB := redistest.Start(t), redistest.Start(t)
	key, costs := quotaKey(t), faultCosts(t, false)
	newHost(t, srvB.Addr, key, costs, "b", nil).spendN(30)
	newHost(t, srvA.Addr, key, costs, "a", nil).spendN(60)
	ctx := context.Background()
	ca, cb := newClient(t, srvA.Addr), newClient(t, srvB.Addr)
	for _, k := range []string{"ingest:{" + key + "}:state", "ingest:{" + key + "}:log:default"} {
		v, err := ca.Dump(ctx, k).Result()
		if err != nil {
			t.Fatalf("DUMP %s: %v", k, err)
		}
		if err := cb.RestoreReplace(ctx, k, time.Hour, v).Err(); err != nil {
			t.Fatalf("RESTORE %s: %v", k, err)
		}
	}
	n := newHost(t, srvB.Addr, key, costs, "n", nil)
	got := fill(t, n)
	t.Logf("keys replaced behind the script: they hold 60, the newcomer got %d", got)
	if got != capacity-60 {
		t.Fatalf("newcomer admitted %d on keys that hold 60 calls, want %d", got, capacity-60)
	}
}

// TestFaultUpgradeFromThePreviousKeys: Redis holds what workers of the
// version before the state key wrote: a clock key ("<ms>-<seq>:<epoch>:
// <wait>") and a total, conf and (here) block key per pool, beside the same
// log. The first worker of this version moves them into the state,
// generation and counter included: an upgrade is not a loss, so nothing
// waits, the 60 calls the old keys count still count, and a block still
// holds. An operator's `quota apply` with the new version first (it writes
// a state without a generation) does not stop the move.
func TestFaultUpgradeFromThePreviousKeys(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name             string
		block, apply     bool
		wait, recovering bool // the old keys hold a recovery's wait; its record is still there
	}{{"counts", false, false, false, false}, {"block", true, false, false, false}, {"after quota apply", false, true, false, false},
		{"wait of a recovery on record", false, false, true, true}, {"wait of an ended recovery", false, false, true, false}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := redistest.Start(t)
			key, costs := quotaKey(t), faultCosts(t, false)
			ctx := context.Background()
			c := newClient(t, srv.Addr)
			w := newHost(t, srv.Addr, key, costs, "w", nil)
			until := oldKeys(t, c, w, key, tc.block)
			if tc.wait {
				p := "ingest:{" + key + "}:"
				clock, _ := c.Get(ctx, p+"clock").Result()
				c.Set(ctx, p+"clock", strings.TrimSuffix(clock, ":0")+fmt.Sprintf(":%d", until.UnixMilli()), 2*time.Hour)
				c.Set(ctx, p+"wait:default", fmt.Sprint(until.UnixMilli()), 2*time.Hour)
				if tc.recovering {
					c.HSet(ctx, p+"recover", "since", fmt.Sprint(time.Now().UnixMilli()), "need", "w,x")
				}
			}
			if tc.recovering {
				d := w.take()
				if wu := pool(d, "default").WaitUntil; d.Allowed || !wu.Equal(until) {
					t.Fatalf("after the upgrade during a recovery: %+v; want refused, waiting until %s", d, until)
				}
				if u, err := c.HGet(ctx, "ingest:{"+key+"}:recover", "until").Result(); err != nil || u != fmt.Sprint(until.UnixMilli()) {
					t.Fatalf("the recovery's record holds until %q, %v; want the old wait's end %d", u, err, until.UnixMilli())
				}
				return
			}
			if tc.apply {
				if _, err := newHost(t, srv.Addr, key, costs, "operator", nil).l.ApplyConfig(ctx); err != nil {
					t.Fatal(err)
				}
			}
			if tc.block {
				d := w.take()
				if b := pool(d, "default").BlockedUntil; d.Allowed || !b.Equal(until) {
					t.Fatalf("after the upgrade: %+v; want refused, blocked until %s as the old block key said", d, until)
				}
				return
			}
			got := fill(t, w)
			t.Logf("upgrade: the previous keys count 60, this version's worker got %d: %d / %d", got, 60+got, capacity)
			if got != capacity-60 {
				t.Fatalf("admitted %d after the upgrade, want %d: the old keys' 60 calls count, and nothing waits", got, capacity-60)
			}
			n, err := c.Exists(ctx, "ingest:{"+key+"}:clock", "ingest:{"+key+"}:total:default", "ingest:{"+key+"}:conf:default").Result()
			if err != nil || n != 0 {
				t.Errorf("%d old keys still there after the move, %v", n, err)
			}
			if len(w.log.find("moved the limiter's keys")) != 1 {
				t.Errorf("the move was not logged once")
			}
		})
	}
}

// oldKeys writes what a worker of the previous version leaves after 60
// calls (in w's ledger too), and with block a block of the pool for an
// hour, whose end it returns.
func oldKeys(t *testing.T, c *redis.Client, w *host, key string, block bool) time.Time {
	t.Helper()
	ctx := context.Background()
	conf, err := w.l.Config(ctx)
	if err != nil {
		t.Fatal(err)
	}
	p := "ingest:{" + key + "}:"
	now := time.Now().UnixMilli()
	first := now - 60_000
	for i := 1; i <= 60; i++ {
		id := fmt.Sprintf("%d-%d", first+int64(i)*1000, i)
		if err := c.XAdd(ctx, &redis.XAddArgs{Stream: p + "log:default", ID: id, Values: []any{"u", 1}}).Err(); err != nil {
			t.Fatal(err)
		}
		w.ledger = append(w.ledger, ingest.Call{ID: id, At: time.UnixMilli(first + int64(i)*1000), Op: "videos.list",
			Charges: []ingest.Charge{{Pool: "default", Units: 1}}})
	}
	until := time.UnixMilli(now + time.Hour.Milliseconds())
	old := map[string]string{
		"clock":         fmt.Sprintf("%d-60:0123456789abcdef:0", first+60_000),
		"total:default": fmt.Sprintf("60:0:%d:0:0:%d:%d:-1:0", now-time.Hour.Milliseconds(), first+1000, now),
		"conf:default":  conf[0].Costs,
	}
	if block {
		old["block:default"] = fmt.Sprint(until.UnixMilli())
	}
	for k, v := range old {
		if err := c.Set(ctx, p+k, v, 2*time.Hour).Err(); err != nil {
			t.Fatal(err)
		}
	}
	return until
}

// TestFaultAccountUnreadable: one pool's account in the state cannot be
// read any more (a corrupt value: the script leaves it out, as lost),
// while the pool's log still holds its 60 calls. That is a loss: the
// account is rebuilt from the log before anything else is admitted, so
// the pool stops at capacity, not 60 calls past it.
func TestFaultAccountUnreadable(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	key, costs := quotaKey(t), faultCosts(t, false)
	w := newHost(t, srv.Addr, key, costs, "w", nil)
	w.spendN(60)
	w.heartbeat()
	ctx := context.Background()
	c := newClient(t, srv.Addr)
	state := "ingest:{" + key + "}:state"
	v, err := c.Get(ctx, state).Result()
	if err != nil {
		t.Fatal(err)
	}
	bad := strings.Replace(v, "\x1edefault\x1f", "\x1edefault\x1fx", 1)
	if bad == v {
		t.Fatalf("no default account in the state %q", v)
	}
	if err := c.Set(ctx, state, bad, redis.KeepTTL).Err(); err != nil {
		t.Fatal(err)
	}
	got := fill(t, w)
	t.Logf("account unreadable, log whole: 60 before, %d after: %d / %d", got, w.admitted(), capacity)
	if w.admitted() != capacity {
		t.Fatalf("admitted %d in the window after the account was lost, want %d", w.admitted(), capacity)
	}
}

// twoPools: pools a and b, an operation for each.
func twoPools(t testing.TB) *ingest.Costs {
	t.Helper()
	c, err := ingest.ParseCosts("two pools", []byte(`pools:
  a: {limit: 10, window: 1h}
  b: {limit: 10, window: 1h}
operations:
  op.a: {a: 1}
  op.b: {b: 1}
`))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestFaultIdlePoolLogExpired: pool b is used once, then only pool a for
// a day. b's log expires (its expiry was last renewed with that call, for
// 25 hours and a minute) while a's calls keep the one state key, and with
// it b's account, alive. b's next call is admitted: a log that expired
// after every entry left the window and the day is not a loss. Deleting
// the log stands in for the expiry; the limiter's clock is moved on.
func TestFaultIdlePoolLogExpired(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	key, costs := quotaKey(t), twoPools(t)
	ctx := context.Background()
	at := func(offset time.Duration) *quota.Redis { return redisAt(t, srv.Addr, key, costs, offset) }
	take := func(l *quota.Redis, op string) ingest.Decision {
		t.Helper()
		d, err := l.Take(ctx, op)
		if err != nil {
			t.Fatalf("%s: %v", op, err)
		}
		return d
	}
	now := at(0)
	take(now, "op.a")
	take(now, "op.b")
	take(at(13*time.Hour), "op.a")
	del(t, srv.Addr, "ingest:{"+key+"}:log:b")
	later := at(26 * time.Hour)
	if d := take(later, "op.b"); !d.Allowed {
		t.Fatalf("b's call a day after its log expired: %+v; want admitted, not a loss", d)
	}
	if d := take(later, "op.a"); !d.Allowed {
		t.Fatalf("a's call after b's: %+v; want admitted (no recovery)", d)
	}
}

// TestFaultStateLostDuringRecovery: a recovery waits for host B's ledger;
// then the state key alone is lost (it held the wait), and a newcomer N,
// which knows no counter, is the next to call. The wait is on record with
// the recovery: N adopts the keys but is admitted nothing until B has
// refilled, and the pool ends at capacity.
func TestFaultStateLostDuringRecovery(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	key, costs := quotaKey(t), faultCosts(t, false)
	a, b := waitingForB(t, srv.Addr, key, costs)
	del(t, srv.Addr, "ingest:{"+key+"}:state")
	n := newHost(t, srv.Addr, key, costs, "n", nil)
	for i := range 10 {
		if d := n.take(); d.Allowed {
			t.Fatalf("newcomer's call %d after the state was lost during the recovery admitted before B refilled: %+v", i+1, d)
		}
	}
	b.heartbeat()
	a.heartbeat()
	after := fill(t, a, b, n)
	t.Logf("state lost during a recovery: 60 before, 0 until B refilled, %d after: %d / %d", after, total(a, b, n), capacity)
	if total(a, b, n) != capacity {
		t.Fatalf("admitted %d in the window, want %d", total(a, b, n), capacity)
	}
}

// TestFaultRefilledCallsAheadOfTheClock: an operator restores ledgers whose
// calls are 10 minutes ahead of the limiter's clock (a worker's clock was
// ahead), 90 units in a 48-hour window; the pool then sits idle and its log
// is lost. 48 hours and 3 minutes later those calls are still in the
// window: the account still counts them, so a 20-unit call is refused, not
// admitted on an account emptied as if the log had expired.
func TestFaultRefilledCallsAheadOfTheClock(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	key := quotaKey(t)
	costs, err := ingest.ParseCosts("long window", []byte(`pools:
  default: {limit: 100, window: 48h}
operations:
  videos.list: {default: 1}
  big: {default: 20}
`))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	at := func(offset time.Duration) *quota.Redis { return redisAt(t, srv.Addr, key, costs, offset) }
	ahead := time.Now().Add(10 * time.Minute).UnixMilli()
	var ledger []ingest.Call
	for i := 1; i <= 90; i++ {
		ms := ahead + int64(i)
		ledger = append(ledger, ingest.Call{ID: fmt.Sprintf("%d-%d", ms, i), At: time.UnixMilli(ms), Op: "videos.list",
			Charges: []ingest.Charge{{Pool: "default", Units: 1}}})
	}
	if _, err := at(0).Restore(ctx, []ingest.Recalled{{Calls: ledger}}); err != nil {
		t.Fatal(err)
	}
	del(t, srv.Addr, "ingest:{"+key+"}:log:default")
	d, err := at(48*time.Hour+3*time.Minute).Take(ctx, "big")
	t.Logf("calls refilled 10 min ahead, log lost, 48h03m later: 20 units allowed %v, %v", d.Allowed, err)
	if err == nil && d.Allowed {
		t.Fatalf("20 units admitted 48h03m later while 90 of 100 are still in the window: %+v", d)
	}
}

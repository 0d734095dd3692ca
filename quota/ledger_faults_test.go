package quota_test

// The limiter under faults, each on real redis-server processes: cron
// hosts that never heartbeat, a snapshot or keys restored in place that
// are behind, repeated outages, single keys lost, a stale copy of the
// ledgers (a failover to a replica that was behind is in
// replica_faults_test.go, clocks that step in clock_faults_test.go). Every
// pool has one window that holds the whole test, so the units admitted in
// the test are the units admitted in the window.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/clock"
	"github.com/ingestworks/ingest/costs"
	"github.com/ingestworks/ingest/internal/rig/redistest"
	"github.com/ingestworks/ingest/quota"
)

// bareHost is a host on a Redis whose quota key nobody created: a new
// host of a new deployment, before `ingest quota apply`.
func bareHost(t *testing.T, addr, key string, costs *ingest.Costs, name string) *host {
	t.Helper()
	h := &host{t: t, name: name, log: &logs{}}
	h.opts = limOpts{QuotaKey: key, Costs: costs, Ledger: name, Where: "host-" + name + ":/" + name + ".db",
		Logger: slog.New(h.log), Timeout: 2 * time.Second, Recall: h.recall, Notes: &notes{m: map[string]string{}}}
	h.client = newClient(t, addr)
	h.restart()
	return h
}

// run is one cron run of h: a new process on the same database that takes
// up to n calls and stops at the first refusal. It returns the calls
// admitted.
func (h *host) run(n int) int {
	h.t.Helper()
	h.restart()
	for i := range n {
		if !h.take().Allowed {
			return i
		}
	}
	return n
}

// repoint moves h to another server (a failover, a restarted server: the
// old connections are gone) and starts its next process.
func (h *host) repoint(addr string) {
	h.t.Helper()
	h.client = newClient(h.t, addr)
	h.restart()
}

func (h *host) unmetered() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	n := 0
	for _, c := range h.ledger {
		if c.Unmetered {
			n += int(c.Charges[0].Units)
		}
	}
	return n
}

// parseCosts parses a costs file for one test.
func parseCosts(t testing.TB, yaml string) *ingest.Costs {
	t.Helper()
	c, err := costs.Parse("test costs", []byte(yaml))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// closedAddr is a loopback address nothing listens on: a REDIS_URL with a
// typo, or a server that is down.
func closedAddr(t testing.TB) string {
	return net.JoinHostPort("127.0.0.1", strconv.Itoa(redistest.FreePort(t)))
}

// TestFaultCronFlushall: two cron hosts, each a ledger of its own, run in
// turn (a new process each run, no heartbeat), then Redis loses everything.
// A newcomer with an empty ledger calls first: it spends nothing and is told
// to run `ingest quota apply`. A's next run finds the loss and waits for B;
// B's next run puts its calls back; once a quiet period of the hosts'
// cadence has passed the pool fills to exactly its capacity.
func TestFaultCronFlushall(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	key, costs := quotaKey(t), faultCosts(t, false)
	a := newHost(t, srv.Addr, key, costs, "a", nil)
	b := newHost(t, srv.Addr, key, costs, "b", nil)
	for _, h := range []*host{a, b, a, b} {
		if n := h.run(15); n != 15 {
			t.Fatalf("%s: run admitted %d of 15 before the loss", h.name, n)
		}
	}
	do(t, srv.Addr, "FLUSHALL")

	c := bareHost(t, srv.Addr, key, costs, "c")
	d, err := c.l.Take(context.Background(), ingest.Caller{}, "videos.list")
	if !errors.Is(err, quota.ErrNotApplied) || d.Allowed {
		t.Fatalf("a newcomer with an empty ledger on a flushed Redis: %+v, %v; want ErrNotApplied", d, err)
	}
	if n := do(t, srv.Addr, "DBSIZE"); n != ":0" {
		t.Fatalf("the newcomer's refused call wrote to Redis: DBSIZE %s", n)
	}

	runs := 0
	for resumed := false; !resumed; runs++ {
		if runs == 100 {
			t.Fatalf("100 cron runs after the loss and nothing admitted: the recovery never ends by refills")
		}
		h := []*host{a, b}[runs%2]
		resumed = h.run(1) == 1
		if resumed && runs == 0 {
			t.Fatalf("A's first run after the loss was admitted before B put its calls back")
		}
		time.Sleep(cadence / 20)
	}
	after := fill(t, a, b)
	t.Logf("cron, FLUSHALL: newcomer refused (ErrNotApplied, nothing written); resumed at cron run %d after the loss (A waits, B refills); then %d more; admitted %d / %d, ledgers a=%d b=%d, Redis %d",
		runs, after, total(a, b), capacity, a.admitted(), b.admitted(), used(t, a.l))
	if total(a, b) != capacity || used(t, a.l) != capacity {
		t.Fatalf("admitted %d, Redis counts %d; want %d both", total(a, b), used(t, a.l), capacity)
	}
}

// reserveCosts: limit 100 with a reserve of 20 (capacity 80), closed while
// Redis is unreachable.
func reserveCosts(t testing.TB) *ingest.Costs {
	return parseCosts(t, `pools:
  default: {limit: 100, reserve: 20, window: 1h}
operations:
  videos.list: {default: 1}
`)
}

// snapshot is every key of a quota key as DUMP gives it, with its expiry.
type snapshot map[string]struct {
	val string
	ttl time.Duration
}

func dumpKeys(t *testing.T, c *redis.Client, key string) snapshot {
	t.Helper()
	ctx, s := context.Background(), snapshot{}
	keys, err := c.Keys(ctx, "ingest:{"+key+"}:*").Result()
	if err != nil || len(keys) == 0 {
		t.Fatalf("keys: %v %v", keys, err)
	}
	for _, k := range keys {
		v, err := c.Dump(ctx, k).Result()
		if err != nil {
			t.Fatal(err)
		}
		ttl, _ := c.PTTL(ctx, k).Result()
		s[k] = struct {
			val string
			ttl time.Duration
		}{v, max(ttl, 0)}
	}
	return s
}

// restoreKeys puts every key back as it was (RESTORE REPLACE), and deletes
// the keys written since: keys restored in place on the running server.
func restoreKeys(t *testing.T, c *redis.Client, key string, s snapshot) {
	t.Helper()
	ctx := context.Background()
	keys, _ := c.Keys(ctx, "ingest:{"+key+"}:*").Result()
	for _, k := range keys {
		if _, ok := s[k]; !ok {
			c.Del(ctx, k)
		}
	}
	for k, v := range s {
		if err := c.RestoreReplace(ctx, k, v.ttl, v.val).Err(); err != nil {
			t.Fatalf("RESTORE %s: %v", k, err)
		}
	}
}

// TestFaultRollback: Redis goes back to an older state (a restart from an
// RDB snapshot, or every key restored in place) that holds all of A's calls
// and not B's last 20. A calls first: it cannot see B's missing calls and
// spends up to the capacity as Redis counts it. B's first call finds the
// loss. The admitted total stays within capacity + what B lost, which is
// within the upstream's limit because the reserve (20) covers it.
func TestFaultRollback(t *testing.T) {
	t.Parallel()
	const lost, limit, cap80 = 20, 100, 80
	for _, how := range []string{"rdb", "in-place"} {
		t.Run(how, func(t *testing.T) {
			t.Parallel()
			srv := redistest.Start(t)
			key, costs := quotaKey(t), reserveCosts(t)
			a := newHost(t, srv.Addr, key, costs, "a", nil)
			b := newHost(t, srv.Addr, key, costs, "b", nil)
			for range 30 {
				a.spendN(1)
				b.spendN(1)
			}
			var snap snapshot
			if how == "rdb" {
				do(t, srv.Addr, "SAVE")
			} else {
				snap = dumpKeys(t, newClient(t, srv.Addr), key)
			}
			b.spendN(lost)
			if how == "rdb" {
				srv.RestartFromSnapshot(t)
				a.repoint(srv.Addr)
				b.repoint(srv.Addr)
			} else {
				restoreKeys(t, newClient(t, srv.Addr), key, snap)
				a.restart()
				b.restart()
			}
			blind := fill(t, a)
			if d := b.take(); d.Allowed {
				t.Fatalf("B's first call after the rollback was admitted: %+v", d)
			}
			if len(b.log.find("lost data")) == 0 {
				t.Fatalf("B's first call did not find the loss")
			}
			a.restart() // A's next run puts its calls back too
			later := fill(t, a, b)
			t.Logf("rollback (%s) behind B's last %d: A admitted %d blind; after B found the loss, %d more; admitted %d / capacity %d (limit %d); ledgers a=%d b=%d, Redis %d",
				how, lost, blind, later, total(a, b), cap80, limit, a.admitted(), b.admitted(), used(t, a.l))
			switch {
			case total(a, b) > cap80+lost:
				t.Fatalf("admitted %d, more than capacity %d + B's lost %d", total(a, b), cap80, lost)
			case total(a, b) > limit:
				t.Fatalf("admitted %d, more than the upstream's limit %d though the reserve covers the %d lost", total(a, b), limit, lost)
			case used(t, a.l) != int64(total(a, b)):
				t.Fatalf("after both refilled, Redis counts %d, the ledgers %d", used(t, a.l), total(a, b))
			}
		})
	}
}

// TestFaultRepeatedOutages: five short outages on a full pool (the host's
// REDIS_URL points at a closed port), each with a new process on the same
// database, and a second process beside it: all of them share one fail_open
// budget of 3 units over the window, counted from the ledger. When Redis
// answers again the unmetered calls are written in once.
func TestFaultRepeatedOutages(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	key, costs := quotaKey(t), faultCosts(t, false)
	h := newHost(t, srv.Addr, key, costs, "a", nil)
	h.spendN(capacity)
	good, bad := h.client, newClient(t, closedAddr(t))
	ctx := context.Background()
	tries, refused := 0, 0
	try := func(l *quota.Redis) {
		tries++
		d, err := l.Take(ctx, ingest.Caller{}, "videos.list")
		switch {
		case err == nil && d.Allowed && d.Unmetered:
			h.record(d)
		case errors.Is(err, quota.ErrUnavailable):
			refused++
		default:
			t.Fatalf("a cheap call while Redis is down: %+v, %v", d, err)
		}
	}
	for range 5 {
		h.client = bad
		h.restart()
		sibling, err := newRedis(bad, h.opts)
		if err != nil {
			t.Fatal(err)
		}
		for range 2 {
			try(h.l)
			try(sibling)
		}
		h.client = good
		h.restart()
		if d := h.take(); d.Allowed {
			t.Fatalf("admitted on a full pool after an outage: %+v", d)
		}
	}
	t.Logf("5 outages on a full pool, 2 processes each: %d cheap calls, %d unmetered (budget 3), %d refused; ledger %d metered + %d unmetered, Redis %d / %d",
		tries, h.unmetered(), refused, h.admitted(), h.unmetered(), used(t, h.l), capacity)
	if h.unmetered() != 3 {
		t.Fatalf("%d units unmetered over the window across 5 outages and 10 processes; want the budget, 3", h.unmetered())
	}
	if u := used(t, h.l); u != int64(h.admitted()+h.unmetered()) {
		t.Fatalf("Redis counts %d, the ledger %d metered + %d unmetered: the unmetered calls must be written in once", u, h.admitted(), h.unmetered())
	}
}

// TestFaultFirstCallAfterOutage: 97 units metered, then 3 cheap calls
// unmetered during an outage (the fail_open budget): the window holds 100.
// The first call once Redis answers must count the 3 (they are in the
// ledger) and be refused, for a cron run as for the same process.
func TestFaultFirstCallAfterOutage(t *testing.T) {
	t.Parallel()
	for _, next := range []string{"same process", "next process"} {
		t.Run(next, func(t *testing.T) {
			t.Parallel()
			srv := redistest.Start(t)
			key := quotaKey(t)
			h := hungHost(t, srv, key, func(o *limOpts) { o.Unknowns = &book{} })
			c, err := quota.NewClient("redis://"+srv.Addr, quota.DefaultTimeout)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { c.Close() })
			h.client = c.(*redis.Client)
			h.spendSteadily(capacity - 3)
			resume := stop(t, srv)
			if n, _ := hungTakes(t, h, 3); n != 3 {
				t.Fatalf("%d of 3 cheap calls unmetered during the outage, want 3", n)
			}
			resume()
			do(t, srv.Addr, "PING") // answered once it runs again
			if next == "next process" {
				h.restart()
			}
			d := h.take()
			t.Logf("97 metered + 3 unmetered, then Redis answers (%s): first call admitted=%v; ledger %d metered + %d unmetered, Redis %d / %d",
				next, d.Allowed, h.admitted(), h.unmetered(), used(t, h.l), capacity)
			if d.Allowed {
				t.Fatalf("the first call after the outage was admitted: %d units in the window / %d", h.admitted()+h.unmetered(), capacity)
			}
		})
	}
}

// cronHosts: hosts a and b, each run twice in turn as cron runs (15 calls
// each), so that each one's copy of the ledgers names both.
func cronHosts(t *testing.T, addr, key string, costs *ingest.Costs) (a, b *host) {
	t.Helper()
	a = newHost(t, addr, key, costs, "a", nil)
	b = newHost(t, addr, key, costs, "b", nil)
	for _, h := range []*host{a, b, a, b} {
		if n := h.run(15); n != 15 {
			t.Fatalf("%s: run admitted %d of 15", h.name, n)
		}
	}
	return a, b
}

// afterLoss runs a and b in turn, as cron does, checking after every run
// that the admitted total never passes the capacity, until the pool is
// full again (untilFull).
func afterLoss(t *testing.T, what string, a, b *host) {
	t.Helper()
	untilFull(t, a, b)
	t.Logf("%s: admitted %d / %d, ledgers a=%d b=%d, Redis %d", what, total(a, b), capacity, a.admitted(), b.admitted(), used(t, a.l))
	if total(a, b) != capacity || used(t, a.l) != capacity {
		t.Fatalf("%s: admitted %d, Redis counts %d; want %d both", what, total(a, b), used(t, a.l), capacity)
	}
}

// TestFaultKeyLost: one key of the quota key is lost (evicted, deleted):
// the state, the pool's log, the ledgers, the configuration. The limiter
// never admits more than its capacity, and resumes once both hosts ran.
func TestFaultKeyLost(t *testing.T) {
	t.Parallel()
	for _, k := range []string{"state", "log:default", "ledgers", "conf"} {
		t.Run(k, func(t *testing.T) {
			t.Parallel()
			srv := redistest.Start(t)
			key := quotaKey(t)
			a, b := cronHosts(t, srv.Addr, key, faultCosts(t, false))
			del(t, srv.Addr, "ingest:{"+key+"}:"+k)
			afterLoss(t, k+" deleted", a, b)
		})
	}
}

// TestFaultLogLostCopyBeforeB: A and B start together; A's copy of the
// ledgers was taken at its first call, before B's first, so it does not
// name B. The pool's log is then lost, while Redis's own ledgers still show
// that B spent in the window. A's recovery must still wait for B.
func TestFaultLogLostCopyBeforeB(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	key := quotaKey(t)
	a, b := twoSpenders(t, srv.Addr, key, faultCosts(t, false))
	del(t, srv.Addr, "ingest:{"+key+"}:log:default")
	afterLoss(t, "log deleted, A's copy older than B's first call", a, b)
}

// TestFaultStaleLedgersCopy: A's copy of the limiter's ledgers is older than
// the pools' span, so it cannot tell who spent since. After FLUSHALL, A's
// recovery names nobody: it waits for time (the window), not for refills,
// however many ledgers refill; once the window has passed, calls go on.
func TestFaultStaleLedgersCopy(t *testing.T) {
	t.Parallel()
	for _, day := range []bool{false, true} {
		t.Run(fmt.Sprintf("day=%v", day), func(t *testing.T) {
			t.Parallel()
			testStaleLedgersCopy(t, day)
		})
	}
}

// testStaleLedgersCopy: with a calendar day, the wait lasts to the end of
// the day as well as a window.
func testStaleLedgersCopy(t *testing.T, day bool) {
	srv := redistest.Start(t)
	key, costs := quotaKey(t), faultCosts(t, day)
	a, b := cronHosts(t, srv.Addr, key, costs)
	n := a.opts.Notes.(*notes)
	name := "ledgers:" + key
	var c struct {
		At      int64              `json:"at"`
		Ledgers []quota.LedgerSeen `json:"ledgers"`
	}
	if err := json.Unmarshal([]byte(n.m[name]), &c); err != nil || len(c.Ledgers) != 2 {
		t.Fatalf("A's copy of the ledgers: %q, %v; want both ledgers", n.m[name], err)
	}
	old := (costs.Span() + time.Hour).Milliseconds()
	c.At -= old
	for i := range c.Ledgers {
		c.Ledgers[i].At -= old
	}
	raw, _ := json.Marshal(c)
	n.m[name] = string(raw)
	do(t, srv.Addr, "FLUSHALL")
	lossAt := time.Now().Truncate(time.Millisecond) // the limiter decides in ms
	if a.run(1) != 0 {
		t.Fatalf("A's first call after the loss was admitted")
	}
	if b.run(1) != 0 {
		t.Fatalf("admitted after A and B refilled, though A's copy of the ledgers is older than the span: the wait ended by refills")
	}
	a.restart()
	d := a.take()
	until := lossAt.Add(time.Hour)
	if day {
		if end := time.UnixMilli(ingest.DayStarts(costs.Pools[0].Day, lossAt)[2]); end.After(until) {
			until = end
		}
	}
	if d.Allowed || d.RetryAt.Before(until) {
		t.Fatalf("after both refilled: %+v; want refused until a window (and the day) after the loss: %s", d, until)
	}
	if day {
		t.Logf("stale copy, pool with a day: after both ledgers refilled, refused until %s (the window and the day)", d.RetryAt)
		return
	}
	later := newHost(t, srv.Addr, key, costs, "c", func(o *limOpts) {
		o.ClockOffset = time.Hour + time.Minute
		o.Clock = clock.Func(func() time.Time { return time.Now().Add(time.Hour + time.Minute) })
	})
	n2 := fill(t, later)
	t.Logf("stale copy of the ledgers (older than the span): after both ledgers refilled, still refused until %s (a window after the loss); a window later, %d admitted / %d",
		d.RetryAt.Format(time.TimeOnly), n2, capacity)
	if n2 != capacity {
		t.Fatalf("a window after the loss, %d admitted; want %d", n2, capacity)
	}
}

// TestFaultStateAndLogGoBack: the state and the log go back together to an
// older copy (restored in place), consistent with each other, while the
// ledgers hash keeps the marks of the calls since. A's call after the copy
// is missing, and its mark in the ledgers hash with it: only the state being
// older than the marks it has seen tells. A's next call finds the loss and
// waits for B, whose 20 calls are missing too; then the pool fills to
// exactly its capacity.
func TestFaultStateAndLogGoBack(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	key, costs := quotaKey(t), faultCosts(t, false)
	c := newClient(t, srv.Addr)
	a := newHost(t, srv.Addr, key, costs, "a", nil)
	b := newHost(t, srv.Addr, key, costs, "b", nil)
	a.spendN(30)
	b.spendN(30)
	snap := dumpKeys(t, c, key)
	for k := range snap {
		if !strings.HasSuffix(k, ":state") && !strings.HasSuffix(k, ":log:default") {
			delete(snap, k)
		}
	}
	b.spendN(20)
	a.spendN(1)
	for k, v := range snap { // these two alone, in place
		if err := c.RestoreReplace(context.Background(), k, v.ttl, v.val).Err(); err != nil {
			t.Fatalf("RESTORE %s: %v", k, err)
		}
	}
	a.restart()
	alone := fill(t, a)
	before := total(a, b)
	untilFull(t, a, b)
	after := total(a, b) - before
	t.Logf("state and log restored to an older copy, ledgers hash kept: A alone %d, then %d; %d / %d in all, Redis %d",
		alone, after, total(a, b), capacity, used(t, a.l))
	if alone != 0 || total(a, b) != capacity || used(t, a.l) != capacity {
		t.Fatalf("A alone was admitted %d (want 0: the limiter waits for B), %d in all, Redis %d; want %d",
			alone, total(a, b), used(t, a.l), capacity)
	}
}

// TestFaultHeartbeatDuringSpends: a daemon's heartbeat reads the limiter
// while the same process is admitted calls. A call admitted between the
// heartbeat's read and its look at the ledger's mark is newer than the
// read, not missing from it: no loss may be declared, and the pool fills
// to exactly its capacity.
func TestFaultHeartbeatDuringSpends(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	key, costs := quotaKey(t), faultCosts(t, false)
	h := newHost(t, srv.Addr, key, costs, "d", func(o *limOpts) { o.Beat = time.Millisecond })
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); h.l.Run(ctx) }()
	n := fill(t, h)
	stop()
	<-done
	lost := len(h.log.find("lost data"))
	t.Logf("heartbeats every 1ms beside %d admissions: %d losses declared; %d / %d", n, lost, h.admitted(), capacity)
	if lost != 0 || h.admitted() != capacity {
		t.Fatalf("%d losses declared by heartbeats racing admissions, %d admitted; want none and %d", lost, h.admitted(), capacity)
	}
}

package quota_test

// The limiter under the faults of issue 31's table that concern a loss:
// a ledger the finder of a loss cannot name (it began spending after the
// finder's last copy of the ledgers), and keys corrupted by hand. Every
// pool has no reserve: the limit itself must hold.

import (
	"context"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/clock"
	"github.com/ingestworks/ingest/internal/rig/redistest"
)

// cadence is the interval between a cron host's runs in these tests: an
// hour scaled down, long enough that the second host's next run, right
// after the finder's, always falls within it.
const cadence = 2 * time.Second

// untilFull runs hosts in turn, as cron does, a pause between runs, until
// a full round admits nothing after something was admitted (the pool is
// full again), checking after every run that the admitted total never
// passes the capacity. It fails when the pool never resumes, and returns
// when it did: the end of the first run that was admitted anything.
func untilFull(t *testing.T, hosts ...*host) (resumedAt time.Time) {
	t.Helper()
	resumed := false
	for round := 0; round < 100; round++ {
		n := 0
		for _, h := range hosts {
			n += h.run(2 * capacity)
			if got := total(hosts...); got > capacity {
				t.Fatalf("after %s's run: %d admitted; want at most %d", h.name, got, capacity)
			}
		}
		if resumed && n == 0 {
			return resumedAt
		}
		if n > 0 && !resumed {
			resumed, resumedAt = true, time.Now()
		}
		time.Sleep(cadence / 20)
	}
	t.Fatalf("100 rounds of runs and the pool never filled again: %d admitted", total(hosts...))
	return resumedAt
}

// TestFaultUnlistedLedgerCron: issue 31's first row. Cron hosts A and B ran
// once each, B's first run after A's last copy of the ledgers, so A's copy
// does not name B; then Redis loses everything. A runs first: it finds the
// loss and puts its calls back; B's calls are not back until B runs. The
// recovery must not end before one cadence has passed in which B finds its
// own calls missing: with no reserve, the pool stays within its limit.
//
// Each run heartbeats from its start, as the binary's do, on a beat much
// shorter than the cadence: until a run's first call, its heartbeat says
// nothing of how often the host runs.
func TestFaultUnlistedLedgerCron(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	key, costs := quotaKey(t), faultCosts(t, false)
	cron := func(name string) *host {
		h := newHost(t, srv.Addr, key, costs, name, func(o *limOpts) { o.Beat = cadence / 20 })
		h.beats = true
		h.restart()
		return h
	}
	a, b := cron("a"), cron("b")
	if n := a.run(30); n != 30 {
		t.Fatalf("A's run admitted %d of 30", n)
	}
	pass(t, srv.Addr, cadence)
	if n := b.run(30); n != 30 {
		t.Fatalf("B's first run admitted %d of 30", n)
	}
	do(t, srv.Addr, "FLUSHALL")
	lossAt := time.Now()
	first := a.run(2 * capacity)
	// The quiet period lasts at least the time since A's last call: a cron
	// host's calls come in one burst, and their gaps say nothing of how
	// often it runs.
	s, err := a.l.State(context.Background())
	if err != nil || len(s) == 0 || s[0].WaitUntil.Before(lossAt.Add(cadence)) {
		t.Fatalf("after A's first run: %+v, %v; want the pools to wait at least a cadence (%s) after the loss", s, err, cadence)
	}
	resumed := untilFull(t, b, a)
	t.Logf("wiped; A's copy does not name B; A runs first: A's first run after the loss admitted %d; resumed %s after the loss (cadence %s, runs every %s after it); in all %d / %d, ledgers a=%d b=%d, Redis %d",
		first, resumed.Sub(lossAt).Round(time.Millisecond), cadence, cadence/20, total(a, b), capacity, a.admitted(), b.admitted(), used(t, a.l))
	if first != 0 || total(a, b) != capacity || used(t, a.l) != capacity {
		t.Fatalf("A's first run admitted %d (want 0), %d in all, Redis %d; want %d both", first, total(a, b), used(t, a.l), capacity)
	}
}

// TestFaultUnlistedLedgerDaemon: the same with daemons that heartbeat: B
// starts spending after A's last copy, and Redis loses everything before
// A's next heartbeat. A's recovery must wait until B's heartbeat has put
// B's calls back, however eagerly A asks.
func TestFaultUnlistedLedgerDaemon(t *testing.T) {
	t.Parallel()
	const beat = 300 * time.Millisecond
	srv := redistest.Start(t)
	key, costs := quotaKey(t), faultCosts(t, false)
	daemon := func(o *limOpts) { o.Beat = beat }
	a := newHost(t, srv.Addr, key, costs, "a", daemon)
	b := newHost(t, srv.Addr, key, costs, "b", daemon)
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	a.spendN(30)
	go a.l.Run(ctx)
	go b.l.Run(ctx)
	pass(t, srv.Addr, 2*beat) // A's copies name A alone; B's first heartbeats are done
	b.spendN(30)
	do(t, srv.Addr, "FLUSHALL")
	lossAt, resumedAt := time.Now(), time.Time{}
	eager := 0
	for deadline := time.Now().Add(20 * beat); time.Now().Before(deadline); {
		switch {
		case a.take().Allowed:
			if eager == 0 {
				resumedAt = time.Now()
			}
			eager++
		case eager > 0:
			deadline = time.Now()
		default:
			time.Sleep(beat / 30)
		}
	}
	// B's heartbeat puts its calls back: awaited, up to 30 beats
	for deadline := time.Now().Add(30 * beat); used(t, a.l) < capacity && time.Now().Before(deadline); {
		pass(t, srv.Addr, beat/10)
	}
	t.Logf("daemons (beat %s), wiped before A's copy named B; A asked every %s: resumed %s after the loss, A admitted %d; %d / %d in all, Redis %d",
		beat, beat/30, resumedAt.Sub(lossAt).Round(time.Millisecond), eager, total(a, b), capacity, used(t, a.l))
	if total(a, b) != capacity || used(t, a.l) != capacity {
		t.Fatalf("%d admitted in all, Redis counts %d; want %d both", total(a, b), used(t, a.l), capacity)
	}
}

// TestFaultCorruptKeys: issue 31's hand-corrupted keys. Hosts A and B spent
// 60 units; then one key is edited by hand. The limiter must treat what it
// cannot believe as lost (wait for the ledgers, which put the calls back),
// never admit on it (860 and 160 today), and never fail every call for
// good: the pool fills to exactly its capacity.
func TestFaultCorruptKeys(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name string
		edit func(t *testing.T, addr, key string)
	}{
		{"units -1000", func(t *testing.T, addr, key string) { editEntry(t, addr, key, "u", "-1000", false) }},
		{"oldest units -1000", func(t *testing.T, addr, key string) { editEntry(t, addr, key, "u", "-1000", true) }},
		{"units abc", func(t *testing.T, addr, key string) { editEntry(t, addr, key, "u", "abc", false) }},
		{"sum abc", func(t *testing.T, addr, key string) { editEntry(t, addr, key, "c", "abc", false) }},
		{"sum -5", func(t *testing.T, addr, key string) { editEntry(t, addr, key, "c", "-5", true) }},
		{"state clock +2h", func(t *testing.T, addr, key string) {
			ahead := time.Now().Add(2 * time.Hour).UnixMilli()
			do(t, addr, "HSET", "ingest:{"+key+"}:state", "clock", fmtInt(ahead))
		}},
		{"state clock abc", func(t *testing.T, addr, key string) { do(t, addr, "HSET", "ingest:{"+key+"}:state", "clock", "abc") }},
		{"seq abc", func(t *testing.T, addr, key string) { do(t, addr, "HSET", "ingest:{"+key+"}:state", "seq", "abc") }},
		{"need junk", func(t *testing.T, addr, key string) { do(t, addr, "HSET", "ingest:{"+key+"}:state", "need", "{junk") }},
		{"ledger entry junk", func(t *testing.T, addr, key string) { do(t, addr, "HSET", "ingest:{"+key+"}:ledgers", "b", "[1,") }},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			srv := redistest.Start(t)
			key := quotaKey(t)
			a, b := cronHosts(t, srv.Addr, key, faultCosts(t, false))
			c.edit(t, srv.Addr, key)
			untilFull(t, a, b)
			t.Logf("%s: admitted %d / %d, ledgers a=%d b=%d, Redis %d", c.name, total(a, b), capacity, a.admitted(), b.admitted(), used(t, a.l))
			if total(a, b) != capacity || used(t, a.l) != capacity {
				t.Fatalf("%s: admitted %d, Redis counts %d; want %d both", c.name, total(a, b), used(t, a.l), capacity)
			}
		})
	}
}

// editEntry rewrites one field of one entry of the pool's log in place:
// the newest, or with oldest the oldest (a stream appends only, so the log
// is written anew with the one field changed).
func editEntry(t *testing.T, addr, key, field, value string, oldest bool) {
	t.Helper()
	c := newClient(t, addr)
	ctx, log := context.Background(), "ingest:{"+key+"}:log:default"
	es, err := c.XRange(ctx, log, "-", "+").Result()
	if err != nil || len(es) == 0 {
		t.Fatalf("XRANGE %s: %d entries, %v", log, len(es), err)
	}
	i := len(es) - 1
	if oldest {
		i = 0
	}
	es[i].Values[field] = value
	ttl := c.PTTL(ctx, log).Val()
	c.Del(ctx, log)
	for _, e := range es {
		if err := c.XAdd(ctx, &redis.XAddArgs{Stream: log, ID: e.ID, Values: []any{"u", e.Values["u"], "c", e.Values["c"]}}).Err(); err != nil {
			t.Fatalf("XADD %s: %v", e.ID, err)
		}
	}
	c.PExpire(ctx, log, ttl)
}

func fmtInt(n int64) string { return strconv.FormatInt(n, 10) }

// TestFaultUnlistedLedgerThreeHosts: A and B know each other; C began
// spending after A's last copy. A finds the loss after a long pause (its
// cadence), B refills right after it (a short one): the quiet period is the
// longest cadence any of them reported, not the last one's, so that C's run
// still falls within it.
func TestFaultUnlistedLedgerThreeHosts(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	key, costs := quotaKey(t), faultCosts(t, false)
	a := newHost(t, srv.Addr, key, costs, "a", nil)
	b := newHost(t, srv.Addr, key, costs, "b", nil)
	c := newHost(t, srv.Addr, key, costs, "c", nil)
	a.run(10)
	pass(t, srv.Addr, cadence) // A's cadence
	b.run(10)
	a.run(10) // A's copy names A and B
	c.run(30) // C's first run, after A's last copy
	b.run(10) // B's cadence: short
	do(t, srv.Addr, "FLUSHALL")
	a.run(2 * capacity)
	b.run(2 * capacity)          // every ledger A named is back
	pass(t, srv.Addr, cadence/4) // past B's cadence, well within A's
	early := a.run(2 * capacity)
	untilFull(t, c, a, b)
	t.Logf("A named A and B, not C; B refilled last, just after its previous run: A admitted %d before C ran; in all %d / %d, Redis %d",
		early, total(a, b, c), capacity, used(t, a.l))
	if early != 0 || total(a, b, c) != capacity || used(t, a.l) != capacity {
		t.Fatalf("A admitted %d before C put its calls back (want 0), %d in all, Redis %d; want %d both", early, total(a, b, c), used(t, a.l), capacity)
	}
}

// TestFaultVouchNearTheSpanEdge: B's calls are near the edge of the span,
// seconds from leaving the window (as long as the span), when Redis loses
// everything. A's
// copy names B: B spent within the span, so A's recovery waits for B, and
// A's runs admit nothing while B's calls are still in the window.
func TestFaultVouchNearTheSpanEdge(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	// a window as long as the span (at least 25 hours), so that the edge
	// of the span is the edge of the window
	key, costs := quotaKey(t), parseCosts(t, "pools:\n  default: {limit: 100, window: 26h}\noperations:\n  videos.list: {default: 1}\n")
	edge := -(26*time.Hour - 20*time.Second) // B's clock: its calls leave the window 20 s from now
	b := newHost(t, srv.Addr, key, costs, "b", func(o *limOpts) {
		o.ClockOffset = edge
		o.Clock = clock.Func(func() time.Time { return time.Now().Add(edge) })
	})
	b.spendN(30)
	a := newHost(t, srv.Addr, key, costs, "a", func(o *limOpts) { o.Beat = time.Minute })
	a.spendN(30) // A's copy, at its first call, names B
	do(t, srv.Addr, "FLUSHALL")
	first := a.run(2 * capacity)
	pass(t, srv.Addr, cadence/4) // past any quiet period of A's own cadence
	second := a.run(2 * capacity)
	t.Logf("B's calls 20 s from leaving the window, wiped: A's runs admitted %d and %d before B ran", first, second)
	if first+second != 0 {
		t.Fatalf("A admitted %d while B's 30 calls, within the span, were not back", first+second)
	}
}

// TestFaultLostCallSameMillisecond: the limiter's clock runs a minute ahead
// of the server's (within the guard), so A's calls share one millisecond
// and differ by their counter alone. Redis goes back to a copy taken before
// A's last call (state, log and ledgers, in place): A's mark is one call
// ahead of the limiter's, in the same millisecond, and A's next call must
// find that call missing.
func TestFaultLostCallSameMillisecond(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	key, costs := quotaKey(t), faultCosts(t, false)
	a := newHost(t, srv.Addr, key, costs, "a", nil)
	c := newClient(t, srv.Addr)
	do(t, srv.Addr, "HSET", "ingest:{"+key+"}:state", "clock", fmtInt(time.Now().Add(time.Minute).UnixMilli()))
	a.spendN(capacity - 1)
	snap := dumpKeys(t, c, key)
	a.spendN(1)
	restoreKeys(t, c, key, snap)
	a.restart()
	extra := fill(t, a)
	t.Logf("Redis back to before A's last call, same millisecond: %d more admitted; %d / %d", extra, a.admitted(), capacity)
	if a.admitted() != capacity {
		t.Fatalf("admitted %d; want %d (the lost call counted again)", a.admitted(), capacity)
	}
}

// TestFaultHeartbeatFindsRollback: Redis goes back to a copy taken before
// daemon D's last 10 calls, D's own entry in the ledgers included (older,
// not gone). D's heartbeat must see that its mark is ahead of the
// limiter's and put the calls back before another host spends them again.
func TestFaultHeartbeatFindsRollback(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	key, costs := quotaKey(t), faultCosts(t, false)
	d := newHost(t, srv.Addr, key, costs, "d", nil)
	e := newHost(t, srv.Addr, key, costs, "e", nil)
	c := newClient(t, srv.Addr)
	d.spendN(90)
	snap := dumpKeys(t, c, key)
	d.spendN(10)
	restoreKeys(t, c, key, snap)
	d.heartbeat()
	extra := fill(t, e)
	t.Logf("rolled back before D's last 10 calls; D's heartbeat, then E: %d admitted; %d / %d", extra, total(d, e), capacity)
	if total(d, e) != capacity {
		t.Fatalf("admitted %d; want %d", total(d, e), capacity)
	}
}

// TestFaultCopyKeepsUnlistedLedger: B's calls are rolled back unnoticed
// (B has not called since), so the limiter no longer lists B; A's copy of
// the ledgers, refreshed meanwhile, must still name B, who spent within the
// span. Then Redis loses everything: A's recovery waits for B.
func TestFaultCopyKeepsUnlistedLedger(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	key, costs := quotaKey(t), faultCosts(t, false)
	a := newHost(t, srv.Addr, key, costs, "a", nil)
	b := newHost(t, srv.Addr, key, costs, "b", nil)
	c := newClient(t, srv.Addr)
	a.spendN(30)
	snap := dumpKeys(t, c, key)
	b.spendN(30)
	a.heartbeat() // A's copy names B
	restoreKeys(t, c, key, snap)
	a.heartbeat() // the limiter lists A alone
	do(t, srv.Addr, "FLUSHALL")
	first := a.run(2 * capacity)
	pass(t, srv.Addr, cadence/4) // past any quiet period of A's own cadence
	second := a.run(2 * capacity)
	t.Logf("B rolled back unnoticed, then wiped: A's runs admitted %d and %d before B ran", first, second)
	if first+second != 0 {
		t.Fatalf("A admitted %d while B's 30 calls were not back", first+second)
	}
}

// TestFaultTrimmedHead: the pool's log loses its oldest entries (XTRIM to
// its last 10, as a maxmemory policy, an operator or a script written for
// another stream may do) after hosts spent 60 of 100. What is left still
// ends where the state says, and its running sums go on; the first
// decision after the trim, a daemon's or a newcomer's, must find the loss.
// Over every trailing window, the hosts are admitted at most the capacity;
// with the daemon first, its recovery names both hosts, and the pool fills
// again to exactly its capacity once they put their calls back. A newcomer
// can name nobody: the pool waits for time.
func TestFaultTrimmedHead(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	cl := redistest.StartCluster(t)
	cluster := redis.NewClusterClient(&redis.ClusterOptions{Addrs: cl.Addrs()})
	t.Cleanup(func() { cluster.Close() })
	for _, topo := range []struct {
		name   string
		client func(t *testing.T) redis.UniversalClient
		addr   string
	}{
		{"redis", func(t *testing.T) redis.UniversalClient { return newClient(t, srv.Addr) }, srv.Addr},
		{"cluster", func(*testing.T) redis.UniversalClient { return cluster }, cl.Nodes[0].Addr},
	} {
		for _, first := range []string{"daemon", "newcomer"} {
			t.Run(topo.name+"/"+first, func(t *testing.T) {
				t.Parallel()
				testCutLog(t, topo.client(t), topo.addr, first == "daemon", false, trimHead)
			})
		}
	}
	// B writes an unmetered call back between the trim and the first
	// decision: rewriting the log must not make the lost head look whole
	t.Run("redis/refill-first", func(t *testing.T) {
		t.Parallel()
		testCutLog(t, newClient(t, srv.Addr), srv.Addr, true, true, trimHead)
	})
	// the same after FLUSHALL: B's unmetered call written back is not B's
	// calls put back, and the recovery still waits for its metered ones
	t.Run("redis/flushall-refill-first", func(t *testing.T) {
		t.Parallel()
		srv := redistest.Start(t) // a server of its own: FLUSHALL reaches every key
		testCutLog(t, newClient(t, srv.Addr), srv.Addr, true, true, func(t *testing.T, c redis.UniversalClient, _ string) {
			if err := c.FlushAll(context.Background()).Err(); err != nil {
				t.Fatalf("FLUSHALL: %v", err)
			}
		})
	})
	// entries deleted from the middle leave the running sums whole: their
	// units still count, nothing is lost
	t.Run("redis/middle", func(t *testing.T) {
		t.Parallel()
		testCutLog(t, newClient(t, srv.Addr), srv.Addr, true, false, deleteMiddle)
	})
}

// trimHead keeps the log's last 10 of its 60 entries.
func trimHead(t *testing.T, c redis.UniversalClient, log string) {
	if n, err := c.XTrimMaxLen(context.Background(), log, 10).Result(); err != nil || n != 50 {
		t.Fatalf("XTRIM %s MAXLEN 10: %d, %v; want 50 trimmed", log, n, err)
	}
}

// deleteMiddle deletes 50 of the log's 60 entries, all but the first 5 and
// the last 5.
func deleteMiddle(t *testing.T, c redis.UniversalClient, log string) {
	ctx := context.Background()
	es, err := c.XRange(ctx, log, "-", "+").Result()
	if err != nil || len(es) != 60 {
		t.Fatalf("XRANGE %s: %d entries, %v; want 60", log, len(es), err)
	}
	var ids []string
	for _, e := range es[5:55] {
		ids = append(ids, e.ID)
	}
	if n, err := c.XDel(ctx, log, ids...).Result(); err != nil || n != 50 {
		t.Fatalf("XDEL %s: %d, %v; want 50 deleted", log, n, err)
	}
}

func testCutLog(t *testing.T, c redis.UniversalClient, addr string, daemonFirst, refill bool, cut func(*testing.T, redis.UniversalClient, string)) {
	key, costs := quotaKey(t), faultCosts(t, false)
	a := hostOn(t, c, key, costs, "a", func(o *limOpts) { o.Beat = cadence / 20 })
	a.beats = true
	a.restart()
	b := hostOn(t, c, key, costs, "b", nil)
	a.spendN(30)
	if n := b.run(30); n != 30 {
		t.Fatalf("B's run admitted %d of 30", n)
	}
	a.heartbeat() // A's copy of the ledgers names B
	cut(t, c, "ingest:{"+key+"}:log:default")
	if refill {
		now := time.Now()
		d := ingest.Decision{ID: fmt.Sprintf("%d-u%08x", now.UnixMilli(), 1), At: now, Op: "videos.list",
			Charges: []ingest.Charge{{Pool: "default", Units: 1}}, Unmetered: true}
		b.record(d)
		// as the first answer after an outage writes them: the unmetered calls alone
		rec := ingest.Recalled{Calls: []ingest.Call{{ID: d.ID, At: d.At, Op: d.Op, Charges: d.Charges, Unmetered: true}}}
		if n, err := b.l.Refill(context.Background(), rec); err != nil || n != 1 {
			t.Fatalf("B writes its unmetered call back: %d, %v; want 1", n, err)
		}
	}
	hosts, firstRun := []*host{a, b}, 0
	if daemonFirst {
		for firstRun < 2*capacity && a.take().Allowed {
			firstRun++
		}
	} else {
		n := hostOn(t, c, key, costs, "n", nil)
		hosts = append(hosts, n)
		firstRun = n.run(2 * capacity)
	}
	// cron runs of every host, a cadence's worth and more, or until full
	for round := 0; round < 100 && total(hosts...)+b.unmetered() < capacity; round++ {
		for _, h := range hosts {
			h.run(2 * capacity)
		}
		pass(t, addr, cadence/20)
	}
	peak := peakWindow(t, costs, hosts...)
	spent := total(hosts...) + b.unmetered()
	t.Logf("%s, daemon first: %v: the first mover admitted %d; in all %d, peak over every trailing window %d / %d; Redis %d",
		t.Name(), daemonFirst, firstRun, spent, peak, capacity, used(t, a.l))
	if peak > capacity {
		t.Fatalf("%d admitted in one window; want at most %d", peak, capacity)
	}
	if daemonFirst && (spent != capacity || used(t, a.l) != capacity) {
		t.Fatalf("the recovery named A and B, who put their calls back: %d admitted, Redis counts %d; want %d both", spent, used(t, a.l), capacity)
	}
}

// peakWindow is the most units the hosts were admitted, metered or not, in
// any trailing window of the pool, counted from their ledgers by the time
// of each call's id.
func peakWindow(t *testing.T, costs *ingest.Costs, hosts ...*host) int64 {
	t.Helper()
	var recs []record
	for _, h := range hosts {
		h.mu.Lock()
		for _, c := range h.ledger {
			ms, _ := idOrder(c.ID)
			recs = append(recs, record{allowed: true, id: c.ID, at: ms, units: map[string]int64{"default": c.Charges[0].Units}})
		}
		h.mu.Unlock()
	}
	p, _ := costs.Pool("default")
	return newWindowSums(recs, "default", p.Window.Milliseconds()).peak()
}

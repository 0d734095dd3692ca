package quota_test

// The tables BenchmarkLimiterTable prints, one section each: how a series
// of decisions is timed, then decision latency, throughput, refusals on a
// full pool, memory, a real replica, and the bars they are held to.

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"text/tabwriter"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ingestworks/ingest/internal/rig/redistest"
)

// Timing sequential decisions.

// percentiles are a series' timings, and its decisions that did not come
// out as expected (an error, or a fail-open admission where a refusal was
// due): they are timed all the same, and counted.
type percentiles struct {
	p50, p99 time.Duration
	off      int
	first    error
}

func pct(ds []time.Duration) percentiles {
	slices.Sort(ds)
	return percentiles{p50: ds[len(ds)/2], p99: ds[len(ds)*99/100]}
}

// offNote says how many of a series' decisions were off, if any.
func offNote(w io.Writer, name string, p percentiles) {
	if p.off > 0 {
		fmt.Fprintf(w, "%s: %d decisions not as expected, the first: %v\n", name, p.off, p.first)
	}
}

// series is one limiter timed at one cost; every decision should come out
// as want (admitted or refused).
type series struct {
	name  string
	d     decide
	units int64
	want  bool
	out   *percentiles
}

// measure times warm + ops sequential decisions of every series and keeps
// the percentiles of the last ops. The series take turns
// in blocks of block calls, in a new random order every round: each runs
// warm, as it would on a Redis of its own, while the machine's drifts fall
// on all of them alike.
func measure(ss []series, warm, ops int) {
	ds := make([][]time.Duration, len(ss))
	offs := make([]percentiles, len(ss))
	order := make([]int, len(ss))
	for j := range order {
		order[j] = j
	}
	rng := rand.New(rand.NewPCG(1, 2))
	ctx := context.Background()
	for i := 0; i < warm+ops; i += block {
		rng.Shuffle(len(order), func(x, y int) { order[x], order[y] = order[y], order[x] })
		for _, j := range order {
			s := ss[j]
			for k := range block {
				start := time.Now()
				ok, err := s.d(ctx, s.units)
				t := time.Since(start)
				if err != nil || ok != s.want {
					offs[j].off++
					offs[j].first = cmp.Or(offs[j].first, err, fmt.Errorf("%d units: allowed %v", s.units, ok))
				}
				if i+k >= warm {
					ds[j] = append(ds[j], t)
				}
			}
		}
	}
	for j, s := range ss {
		*s.out = pct(ds[j])
		s.out.off, s.out.first = offs[j].off, offs[j].first
	}
}

// 1. Decision latency.

type latRow struct {
	name     string
	p1, p100 percentiles
	cost100  bool // PING has no cost
}

type latencies struct{ rows []*latRow }

func (l latencies) get(name string) *latRow {
	for _, r := range l.rows {
		if r.name == name {
			return r
		}
	}
	panic(name)
}

// latencyTable times admissions at cost 1 and at cost 100, each limiter
// on a 24-hour window prefilled with a mixed day.
func latencyTable(b *testing.B, c redis.UniversalClient) latencies {
	costs := shippedCosts(b, bigLimit)
	pingRow := &latRow{name: "PING"}
	l := latencies{rows: []*latRow{pingRow}}
	ss := []series{{"PING", ping(c), 1, true, &pingRow.p1}}
	add := func(name string, mk func(key string) decide) {
		r := &latRow{name: name, cost100: true}
		d1, d100 := mk(name+"-1"), mk(name+"-100")
		prefill(b, name, d1, mixedDay(5000, 45))
		prefill(b, name, d100, mixedDay(5000, 45))
		l.rows = append(l.rows, r)
		ss = append(ss, series{name, d1, 1, true, &r.p1}, series{name, d100, 100, true, &r.p100})
	}
	add("redis_rate GCRA", func(k string) decide { return gcraLimiter(c, k, bigLimit, day) })
	add("per-call zset + sum", func(k string) decide { return perCallLimiter(c, k, bigLimit) })
	add("window.lua", func(k string) decide { return ours(newOurs(b, c, "lat-"+k, costs, 0)) })
	measure(ss, warmOps, latencyOps)
	return l
}

func (l latencies) print(w io.Writer) {
	ping, gcra := l.get("PING"), l.get("redis_rate GCRA")
	fmt.Fprintf(w, "\n1. decision latency (µs), admissions: %d sequential decisions per series, series in turn in blocks of %d, 24-hour window prefilled with a mixed day\n", latencyOps, block)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "limiter\tp50 cost 1\tp99 cost 1\tp50 cost 100\tp99 cost 100\tp50 ÷ PING, 1 / 100\tp50 ÷ redis_rate, 1 / 100\t\n")
	for _, r := range l.rows {
		if !r.cost100 {
			fmt.Fprintf(tw, "%s\t%s\t%s\t\t\t\t\t\n", r.name, us(r.p1.p50), us(r.p1.p99))
			continue
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%.2f / %.2f\t%.2f / %.2f\t\n", r.name, us(r.p1.p50), us(r.p1.p99), us(r.p100.p50), us(r.p100.p99),
			div(r.p1.p50, ping.p1.p50), div(r.p100.p50, ping.p1.p50), div(r.p1.p50, gcra.p1.p50), div(r.p100.p50, gcra.p100.p50))
	}
	tw.Flush()
	for _, r := range l.rows {
		offNote(w, r.name+", cost 1", r.p1)
		offNote(w, r.name+", cost 100", r.p100)
	}
}

// 3. Refusals on a full pool.

type refRow struct {
	name string
	p    percentiles
}

type refusals struct {
	rows []*refRow
	full decide // window.lua's long log, full: for throughput
}

func (r refusals) get(name string) percentiles {
	for _, x := range r.rows {
		if x.name == name {
			return x.p
		}
	}
	panic(name)
}

const (
	refShort = "window.lua, 100 entries, cost 1"
	refLong  = "window.lua, 9,500 entries, cost 1"
	refAlt   = "window.lua, 9,500 entries, costs 1/100"
)

// refusalTable times refusals on a full 9,500-unit day: ours with a short
// log (100 calls of 95 units) and a long one (9,500 calls of 1), at cost 1
// and alternating 1 and 100; redis_rate after one 9,500-unit call and the
// per-call sorted set after 9,500 calls of 1 beside them.
func refusalTable(b *testing.B, c redis.UniversalClient) refusals {
	costs := shippedCosts(b, 10_000)
	// GCRA gives a unit back every period/limit: over a year rather than
	// a day, so that none comes back while the table runs.
	gcra := gcraLimiter(c, "ref-gcra", dayLimit, 365*day)
	prefill(b, "redis_rate", gcra, []int64{dayLimit})
	perCall := perCallLimiter(c, "ref-percall", dayLimit)
	prefill(b, "per-call zset", perCall, repeat(1, dayLimit))
	short := ours(newOurs(b, c, "ref-short", costs, 0))
	prefill(b, refShort, short, repeat(95, 100))
	long := ours(newOurs(b, c, "ref-long", costs, 0))
	prefill(b, refLong, long, repeat(1, dayLimit))

	var out refusals
	var ss []series
	add := func(name string, d decide, want bool) {
		r := &refRow{name: name}
		out.rows = append(out.rows, r)
		ss = append(ss, series{name, d, 1, want, &r.p})
	}
	add("PING", ping(c), true)
	add("redis_rate GCRA, cost 1", gcra, false)
	add("per-call zset + sum, 9,500 entries, cost 1", perCall, false)
	add(refShort, short, false)
	add(refLong, long, false)
	add(refAlt, alternating(long), false)
	measure(ss, refusalWarm, refusalOps)
	out.full = long
	return out
}

func (r refusals) print(w io.Writer) {
	ping, gcra := r.get("PING"), r.get("redis_rate GCRA, cost 1")
	fmt.Fprintf(w, "\n3. refusals (µs) on a full 9,500-unit day: %d sequential refusals per series, in turn as above\n", refusalOps)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "limiter\tp50\tp99\tp50 ÷ PING\tp50 ÷ redis_rate\t\n")
	for _, x := range r.rows {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%.2f\t%.2f\t\n", x.name, us(x.p.p50), us(x.p.p99), div(x.p.p50, ping.p50), div(x.p.p50, gcra.p50))
	}
	tw.Flush()
	for _, x := range r.rows {
		offNote(w, x.name, x.p)
	}
}

// 2. Throughput.

type tpRow struct {
	name    string
	d       decide
	rates   []float64
	refused float64 // share of refusals, last round
	errs    int64
	err     error // the first error
}

func (r *tpRow) median() float64 {
	s := slices.Clone(r.rates)
	slices.Sort(s)
	return s[len(s)/2]
}

type throughputs struct{ rows []*tpRow }

func (t throughputs) get(name string) *tpRow {
	for _, r := range t.rows {
		if r.name == name {
			return r
		}
	}
	panic(name)
}

const (
	tpAdmit  = "window.lua, admitting"
	tpRefuse = "window.lua, full pool"
)

// throughputTable runs callers goroutines on one client, deciding 1 unit
// each as fast as they can, for tpRounds rounds of tpRound per row, rows
// in turn: ours on a pool that admits everything and on the full pool of
// the refusal table.
func throughputTable(b *testing.B, c redis.UniversalClient, full decide) throughputs {
	t := throughputs{rows: []*tpRow{
		{name: "PING", d: ping(c)},
		{name: "redis_rate GCRA", d: gcraLimiter(c, "tp-gcra", bigLimit, day)},
		{name: tpAdmit, d: ours(newOurs(b, c, "tp-admit", shippedCosts(b, bigLimit), 0))},
		{name: tpRefuse, d: full},
	}}
	for range tpRounds {
		for _, r := range t.rows {
			rate, refused, errs, err := hammer(r.d)
			r.rates, r.refused, r.errs = append(r.rates, rate), refused, r.errs+errs
			r.err = cmp.Or(r.err, err)
		}
	}
	return t
}

// hammer runs callers goroutines deciding 1 unit for tpRound and returns
// decisions/s, the share refused, the errors and the first of them.
func hammer(d decide) (rate, refused float64, errs int64, first error) {
	var n, no, bad atomic.Int64
	var once sync.Once
	var wg sync.WaitGroup
	ctx := context.Background()
	start := time.Now()
	end := start.Add(tpRound)
	for range callers {
		wg.Go(func() {
			for time.Now().Before(end) {
				ok, err := d(ctx, 1)
				switch {
				case err != nil:
					bad.Add(1)
					once.Do(func() { first = err })
				case !ok:
					no.Add(1)
				}
				n.Add(1)
			}
		})
	}
	wg.Wait()
	good := n.Load() - bad.Load()
	return float64(good) / time.Since(start).Seconds(), float64(no.Load()) / float64(max(good, 1)), bad.Load(), first
}

func (t throughputs) print(w io.Writer) {
	ping, gcra := t.get("PING").median(), t.get("redis_rate GCRA").median()
	fmt.Fprintf(w, "\n2. throughput: %d callers on one client, 1 unit a call, %d rounds of %s, rows in turn\n", callers, tpRounds, tpRound)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "limiter\tdecisions/s (median)\trounds\trefused\terrors\t÷ PING\t÷ redis_rate\t\n")
	for _, r := range t.rows {
		var rs []string
		for _, x := range r.rates {
			rs = append(rs, fmt.Sprintf("%.0f", x))
		}
		fmt.Fprintf(tw, "%s\t%.0f\t%s\t%.1f%%\t%d\t%.2f\t%.2f\t\n", r.name, r.median(), strings.Join(rs, " "), 100*r.refused, r.errs, r.median()/ping, r.median()/gcra)
	}
	tw.Flush()
	for _, r := range t.rows {
		if r.err != nil {
			fmt.Fprintf(w, "%s: %d errors, the first: %v\n", r.name, r.errs, r.err)
		}
	}
}

// 5. Options.Replicas = 1 with a real replica.

type replicaRows struct {
	ping, plain, wait percentiles
}

// replicaTable attaches a second redis-server to srv as its replica and
// times admissions at cost 1 of two limiters on srv, prefilled with a
// mixed day: one that WAITs for one replica after each write, and one that
// does not.
func replicaTable(b *testing.B, c redis.UniversalClient, srv *redistest.Server) replicaRows {
	replica := redistest.Start(b)
	if _, err := redistest.Do(replica.Addr, "REPLICAOF", "127.0.0.1", strconv.Itoa(srv.Port)); err != nil {
		b.Fatal(err)
	}
	rc := client(b, replica.Addr)
	for deadline := time.Now().Add(10 * time.Second); infoField(rc, "replication", "master_link_status") != "up"; {
		if time.Now().After(deadline) {
			b.Fatalf("the replica's link to its master is not up: %q", infoField(rc, "replication", "master_link_status"))
		}
		time.Sleep(20 * time.Millisecond)
	}
	costs := shippedCosts(b, bigLimit)
	plain := ours(newOurs(b, c, "rep-plain", costs, 0))
	wait := ours(newOurs(b, c, "rep-wait", costs, 1))
	prefill(b, "replica, no WAIT", plain, mixedDay(5000, 45))
	prefill(b, "replica, WAIT 1", wait, mixedDay(5000, 45))
	var r replicaRows
	measure([]series{
		{"PING", ping(c), 1, true, &r.ping},
		{"window.lua", plain, 1, true, &r.plain},
		{"window.lua, Replicas 1", wait, 1, true, &r.wait},
	}, warmOps, latencyOps)
	return r
}

func (r replicaRows) print(w io.Writer) {
	fmt.Fprintf(w, "\n5. Options.Replicas (µs): admissions at cost 1 on a master with one replica (REPLICAOF, link up), in turn as above\n")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "limiter\tp50\tp99\tp50 ÷ PING\tp50 ÷ no WAIT\tp99 ÷ no WAIT\t\n")
	fmt.Fprintf(tw, "PING\t%s\t%s\t\t\t\t\n", us(r.ping.p50), us(r.ping.p99))
	fmt.Fprintf(tw, "window.lua, no WAIT\t%s\t%s\t%.2f\t\t\t\n", us(r.plain.p50), us(r.plain.p99), div(r.plain.p50, r.ping.p50))
	fmt.Fprintf(tw, "window.lua, WAIT 1 (Replicas 1)\t%s\t%s\t%.2f\t%.2f\t%.2f\t\n", us(r.wait.p50), us(r.wait.p99),
		div(r.wait.p50, r.ping.p50), div(r.wait.p50, r.plain.p50), div(r.wait.p99, r.plain.p99))
	tw.Flush()
	offNote(w, "window.lua, no WAIT", r.plain)
	offNote(w, "window.lua, WAIT 1", r.wait)
}

// 4. Memory.

type memRow struct {
	name         string
	mixed, dear  int64 // used_memory deltas
	use, dearUse int64 // MEMORY USAGE of each day's keys: used_memory also
	// grows by what the server allocates for itself, which can fall in
	// either day's measure
}

type memories struct {
	rows  []memRow
	byKey []string // window.lua's mixed day, MEMORY USAGE key by key
}

func (m memories) get(name string) memRow {
	for _, r := range m.rows {
		if r.name == name {
			return r
		}
	}
	panic(name)
}

// memoryTable fills a 9,500-unit day two ways (5,000 x 1 + 45 x 100, and
// 95 x 100) and reads the growth of used_memory around each fill, and the
// MEMORY USAGE of the limiter's keys after it.
func memoryTable(b *testing.B, c redis.UniversalClient) memories {
	costs := shippedCosts(b, 10_000)
	var out memories
	type limiter struct {
		name string
		mk   func(key string) (decide, []string)
	}
	for _, l := range []limiter{
		{"redis_rate GCRA", func(k string) (decide, []string) { return gcraLimiter(c, k, dayLimit, day), []string{"rate:" + k} }},
		{"per-call zset + sum", func(k string) (decide, []string) { return perCallLimiter(c, k, dayLimit), perCallKeys(k) }},
		{"window.lua", func(k string) (decide, []string) {
			l := newOurs(b, c, k, costs, 0)
			return ours(l), l.Keys()
		}},
	} {
		mixed, keys := l.mk("mem-mixed-" + l.name)
		dear, dearKeys := l.mk("mem-dear-" + l.name)
		r := memRow{name: l.name}
		r.mixed = grown(b, c, func() { prefill(b, l.name, mixed, mixedDay(5000, 45)) })
		r.dear = grown(b, c, func() { prefill(b, l.name, dear, mixedDay(0, 95)) })
		r.use, r.dearUse = memoryUsage(b, c, keys), memoryUsage(b, c, dearKeys)
		for _, k := range keys {
			if n := memoryUsage(b, c, []string{k}); n > 0 && l.name == "window.lua" {
				_, short, _ := strings.Cut(k, "}:")
				out.byKey = append(out.byKey, fmt.Sprintf("%s %d", short, n))
			}
		}
		out.rows = append(out.rows, r)
	}
	return out
}

// grown is how much used_memory grew while f ran.
func grown(b *testing.B, c redis.UniversalClient, f func()) int64 {
	before := usedMemory(b, c)
	f()
	return usedMemory(b, c) - before
}

func usedMemory(b *testing.B, c redis.UniversalClient) int64 {
	n, err := strconv.ParseInt(infoField(c, "memory", "used_memory"), 10, 64)
	if err != nil {
		b.Fatalf("used_memory: %v", err)
	}
	return n
}

func memoryUsage(b *testing.B, c redis.UniversalClient, keys []string) int64 {
	var sum int64
	for _, k := range keys {
		n, err := c.MemoryUsage(context.Background(), k, 0).Result()
		if err != nil && err != redis.Nil {
			b.Fatalf("memory usage %s: %v", k, err)
		}
		sum += n
	}
	return sum
}

func (m memories) print(w io.Writer) {
	fmt.Fprintf(w, "\n4. memory (bytes) of a full 9,500-unit day (redis_rate's GCRA keeps no log: its day is one key)\n")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "limiter\tused_memory Δ, 5,000x1 + 45x100\t(MEMORY USAGE)\tused_memory Δ, 95x100\t(MEMORY USAGE)\t\n")
	for _, r := range m.rows {
		fmt.Fprintf(tw, "%s\t%d\t(%d)\t%d\t(%d)\t\n", r.name, r.mixed, r.use, r.dear, r.dearUse)
	}
	tw.Flush()
	fmt.Fprintf(w, "window.lua's mixed day, MEMORY USAGE by key: %s\n", strings.Join(m.byKey, ", "))
}

// The bars.

func bars(w io.Writer, lat latencies, ref refusals, tp throughputs, rep replicaRows, mem memories) {
	ours := lat.get("window.lua")
	short, long, alt := ref.get(refShort), ref.get(refLong), ref.get(refAlt)
	m, pc := mem.get("window.lua"), mem.get("per-call zset + sum")
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "bar (issue 21)\tmeasured\tbar\t\n")
	bar(tw, "1. decision p99, cost 1 (ms)", ms(ours.p1.p99), ms(p99Bar), true)
	bar(tw, "1. decision p99, cost 100 (ms)", ms(ours.p100.p99), ms(p99Bar), true)
	bar(tw, "3. refusal p99, 9,500 entries, costs 1/100 (ms)", ms(alt.p99), ms(p99Bar), true)
	bar(tw, "5. decision p99 with Replicas 1, cost 1 (ms)", ms(rep.wait.p99), ms(p99Bar), true)
	bar(tw, "2. decisions/s, 32 callers, admitting", tp.get(tpAdmit).median(), tpBar, false)
	bar(tw, "2. decisions/s, 32 callers, full pool", tp.get(tpRefuse).median(), tpBar, false)
	bar(tw, "3. refusal p50, 9,500 entries / 100", div(long.p50, short.p50), growthBar, true)
	bar(tw, "3. refusal p50, costs 1/100 / cost 1 (9,500 entries)", div(alt.p50, long.p50), growthBar, true)
	bar(tw, "4. MEMORY USAGE, mixed day (B)", float64(m.use), memoryBar, true)
	bar(tw, "4. used_memory Δ, mixed day (B)", float64(m.mixed), memoryBar, true)
	tw.Flush()
	fmt.Fprintf(w, "beside: refusal p99 9,500 / 100 entries %.2f, costs 1/100 / cost 1 %.2f; MEMORY USAGE ÷ per-call zset %.2f; Replicas 1 p50 ÷ none %.2f\n",
		div(long.p99, short.p99), div(alt.p99, long.p99), float64(m.use)/float64(pc.use), div(rep.wait.p50, rep.plain.p50))
}

func bar(w io.Writer, name string, got, limit float64, atMost bool) {
	ok, op := got <= limit, "<="
	if !atMost {
		ok, op = got >= limit, ">="
	}
	state := "met"
	if !ok {
		state = "MISSED"
	}
	fmt.Fprintf(w, "%s\t%s\t%s %s\t%s\n", name, num(got), op, num(limit), state)
}

// num prints a figure with the digits it needs.
func num(x float64) string {
	if x >= 100 {
		return fmt.Sprintf("%.0f", x)
	}
	return fmt.Sprintf("%.2f", x)
}

func div(a, b time.Duration) float64 { return float64(a) / float64(b) }

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func us(d time.Duration) string { return fmt.Sprintf("%.1f", float64(d.Nanoseconds())/1000) }

// infoField reads one field of an INFO section.
func infoField(c redis.UniversalClient, section, field string) string {
	info, _ := c.Info(context.Background(), section).Result()
	for line := range strings.Lines(info) {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), field+":"); ok {
			return v
		}
	}
	return ""
}

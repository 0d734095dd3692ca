package quota_test

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"text/tabwriter"
	"time"

	"github.com/go-redis/redis_rate/v10"
	"github.com/redis/go-redis/v9"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/costs"
	"github.com/ingestworks/ingest/internal/redistest"
	"github.com/ingestworks/ingest/quota"
)

// BenchmarkLimiterTable measures window.lua beside PING and two baselines
// (redis_rate's GCRA and a per-call sorted set) on one redis-server in one
// run, through the production client, and prints the speed and memory
// bars of issue 21. Nothing here is asserted: `make bench` prints it.
func BenchmarkLimiterTable(b *testing.B) {
	benchOnce.Do(func() { limiterTable(b) })
	for b.Loop() {
	}
}

var benchOnce sync.Once

const (
	day         = 24 * time.Hour
	dayLimit    = 9_500       // the shipped default pool: 10,000 less 500
	bigLimit    = 100_000_000 // a pool that admits every call of the run
	latencyOps  = 5000        // timed decisions per series
	warmOps     = 200         // untimed decisions per series, first
	refusalOps  = 500         // fewer: a refusal that walks the log takes ms
	refusalWarm = 50
	block       = 50 // series take turns in blocks of this many calls
	callers     = 32
	tpRounds    = 3 // throughput rounds, rows in turn
	tpRound     = time.Second
	hundredOp   = "bench.hundred" // 100 units of the default pool
	fillOp      = "bench.fill"    // 95 units: 100 calls fill the pool
)

// Bars of issue 21.
const (
	p99Bar    = 2 * time.Millisecond
	tpBar     = 5_000
	growthBar = 1.25   // a refusal's p50 may not grow by more than this
	memoryBar = 84_992 // B, the mixed day before the rewrite
)

// decide is one decision of a limiter at a cost; allowed is false for a
// refusal, which is not an error.
type decide func(ctx context.Context, units int64) (allowed bool, err error)

// perCallScript is the sliding log a careful team would write: one
// sorted-set member per call ("<id>:<units>") and a running sum beside it;
// its retry time is the oldest entry's, which is wrong when costs differ.
var perCallScript = redis.NewScript(`
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local window, limit, cost = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
local horizon = now - window
local sum = tonumber(redis.call('GET', KEYS[2]) or '0')
local gone = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', horizon)
for _, m in ipairs(gone) do sum = sum - tonumber(string.match(m, ':(%d+)$')) end
if #gone > 0 then redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', horizon) end
if sum + cost > limit then
  if #gone > 0 then redis.call('SET', KEYS[2], sum, 'PX', window + 60000) end
  local oldest = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
  return {0, tonumber(oldest[2]) + window}
end
redis.call('ZADD', KEYS[1], now, ARGV[4] .. ':' .. cost)
redis.call('SET', KEYS[2], sum + cost, 'PX', window + 60000)
redis.call('PEXPIRE', KEYS[1], window + 60000)
return {1, 0}
`)

var seq atomic.Int64

func perCallKeys(key string) []string {
	return []string{"percall:{" + key + "}:log", "percall:{" + key + "}:sum"}
}

func perCallLimiter(c redis.UniversalClient, key string, limit int64) decide {
	keys := perCallKeys(key)
	return bounded(func(ctx context.Context, units int64) (bool, error) {
		v, err := perCallScript.Run(ctx, c, keys, day.Milliseconds(), limit, units, seq.Add(1)).Int64Slice()
		return err == nil && v[0] == 1, err
	})
}

// gcraLimiter is redis_rate's GCRA, limit units per period.
func gcraLimiter(c redis.UniversalClient, key string, limit int, period time.Duration) decide {
	l := redis_rate.NewLimiter(c)
	lim := redis_rate.Limit{Rate: limit, Burst: limit, Period: period}
	return bounded(func(ctx context.Context, units int64) (bool, error) {
		res, err := l.AllowN(ctx, key, lim, int(units))
		return err == nil && res.Allowed > 0, err
	})
}

func ping(c redis.UniversalClient) decide {
	return bounded(func(ctx context.Context, _ int64) (bool, error) { return true, c.Ping(ctx).Err() })
}

// bounded gives a baseline's calls the deadline every call of ours has
// (quota.Redis bounds each script by its timeout), so that the rows pay
// alike for the client's deadline handling.
func bounded(d decide) decide {
	return func(ctx context.Context, units int64) (bool, error) {
		ctx, cancel := context.WithTimeout(ctx, quota.DefaultTimeout)
		defer cancel()
		return d(ctx, units)
	}
}

// ours decides through quota.Redis.Take, the path the jobs use.
func ours(l *quota.Redis) decide {
	ops := map[int64]string{1: "videos.list", 95: fillOp, 100: hundredOp}
	return func(ctx context.Context, units int64) (bool, error) {
		d, err := l.Take(ctx, ingest.Caller{}, ops[units])
		return d.Allowed, err
	}
}

// alternating decides 1 and 100 units in turn, whatever it is asked.
func alternating(d decide) decide {
	n := 0
	return func(ctx context.Context, _ int64) (bool, error) {
		n++
		return d(ctx, []int64{1, 100}[n%2])
	}
}

// shippedCosts is the built-in costs.yaml (pools default, search and stats,
// 24-hour windows and the America/Los_Angeles day) with the default pool's
// limit set, and the bench's 95- and 100-unit operations added; a limit of
// 10,000 is the shipped 9,500-unit pool.
func shippedCosts(b *testing.B, limit int64) *ingest.Costs {
	yaml := fmt.Sprintf(`pools:
  default: {limit: %d, reserve: 500, window: 24h, day: America/Los_Angeles, fail_open: {max_cost: 1, budget: 200}}
  search:  {limit: 100, reserve: 5, window: 24h, day: America/Los_Angeles}
  stats:   {limit: 10000, reserve: 0, window: 24h, day: America/Los_Angeles, fail_open: {max_cost: 1, budget: 200}}
operations:
  videos.list: {default: 1}
  search.list: {search: 1}
  videos.batchGetStats: {stats: 1}
  %s: {default: 100}
  %s: {default: 95}
`, limit, hundredOp, fillOp)
	c, err := costs.Parse("bench costs", []byte(yaml))
	if err != nil {
		b.Fatal(err)
	}
	return c
}

// newOurs is a limiter on a quota key of its own, created as `ingest quota
// apply` creates it.
func newOurs(b *testing.B, c redis.UniversalClient, key string, costs *ingest.Costs, replicas int) *quota.Redis {
	l, err := newRedis(c, limOpts{QuotaKey: key, Costs: costs, Timeout: quota.DefaultTimeout, Replicas: replicas,
		Logger: slog.New(slog.DiscardHandler)}) // the tables count errors and fail-open admissions
	if err != nil {
		b.Fatal(err)
	}
	if _, err := l.ApplyConfig(context.Background()); err != nil {
		b.Fatal(err)
	}
	return l
}

// mixedDay is the order of a day of ones 1-unit and hundreds 100-unit
// calls, the dear calls spread among the cheap ones.
func mixedDay(ones, hundreds int) []int64 {
	n := ones + hundreds
	out := make([]int64, 0, n)
	every := ones/max(hundreds, 1) + 1
	for len(out) < n {
		if hundreds > 0 && (len(out)%every == 0 || ones == 0) {
			out, hundreds = append(out, 100), hundreds-1
		} else {
			out, ones = append(out, 1), ones-1
		}
	}
	return out
}

func repeat(units int64, n int) []int64 { return slices.Repeat([]int64{units}, n) }

// prefill admits every call of costs, in order.
func prefill(b *testing.B, name string, d decide, costs []int64) {
	for i, units := range costs {
		if ok, err := d(context.Background(), units); err != nil || !ok {
			b.Fatalf("fill %s: call %d of %d units: allowed %v, %v", name, i, units, ok, err)
		}
	}
}

func limiterTable(b *testing.B) {
	srv := redistest.Start(b)
	c := client(b, srv.Addr)
	lat := latencyTable(b, c)
	ref := refusalTable(b, c)
	mem := memoryTable(b, c)
	tp := throughputTable(b, c, ref.full)
	rep := replicaTable(b, c, srv)

	fmt.Printf("\nredis-server %s on loopback, one run; client quota.NewClient (timeout %s, no retries), every call under that deadline, GOMAXPROCS %d\n",
		infoField(c, "server", "redis_version"), quota.DefaultTimeout, runtime.GOMAXPROCS(0))
	lat.print(os.Stdout)
	ref.print(os.Stdout)
	tp.print(os.Stdout)
	rep.print(os.Stdout)
	mem.print(os.Stdout)
	bars(os.Stdout, lat, ref, tp, rep, mem)
}

func client(b *testing.B, addr string) redis.UniversalClient {
	c, err := quota.NewClient("redis://"+addr, quota.DefaultTimeout)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { c.Close() })
	return c
}

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

// BenchmarkSQLiteTakeOnADay: a take on the embedded limiter whose pool
// holds a day of calls, 10,000 entries (the shipped stats pool's day), with
// the log's index by time carrying the units, as migrated, beside the same
// index without them, the schema before: a decision sums the pool's units
// over its window. The third shape has the same day in the ledger beside
// the log, as a worker's database holds it: each decision also reads the
// ledger's calls since its last look for those the log lacks.
func BenchmarkSQLiteTakeOnADay(b *testing.B) {
	for _, shape := range []struct {
		name, index string
		ledger      bool
	}{
		{"index-with-units", "", false},
		{"index-without-units", `DROP INDEX quota_log_at; CREATE INDEX quota_log_at ON quota_log (quota_key, pool, at_ms)`, false},
		{"index-with-units-and-a-day-of-ledger", "", true},
	} {
		b.Run(shape.name, func(b *testing.B) {
			ctx := context.Background()
			db := openDB(b, filepath.Join(b.TempDir(), "day.db"), false)
			costs := parseCosts(b, "pools:\n  default: {limit: 1000000, window: 24h}\noperations:\n  videos.list: {default: 1}\n")
			l, err := newSQLite(db, limOpts{QuotaKey: "day", Costs: costs, Logger: quiet})
			if err != nil {
				b.Fatal(err)
			}
			if _, err := l.Take(ctx, ingest.Caller{}, "videos.list"); err != nil {
				b.Fatal(err)
			}
			tx, err := db.Begin()
			if err != nil {
				b.Fatal(err)
			}
			now := time.Now().UnixMilli()
			for i := range 10000 {
				at := now - int64(i+1)*8000
				if _, err := tx.Exec(`INSERT INTO quota_log (quota_key, pool, id, at_ms, units) VALUES ('day', 'default', ?, ?, 1)`,
					fmt.Sprintf("%d-%d", at, i), at); err != nil {
					b.Fatal(err)
				}
				if !shape.ledger {
					continue
				}
				if _, err := tx.Exec(`INSERT INTO ledger (quota_key, call_id, pool, units, at_ms, op) VALUES ('day', ?, 'default', 1, ?, 'videos.list')`,
					fmt.Sprintf("%d-%d", at, i), at); err != nil {
					b.Fatal(err)
				}
			}
			if err := tx.Commit(); err != nil {
				b.Fatal(err)
			}
			if shape.index != "" {
				if _, err := db.Exec(shape.index); err != nil {
					b.Fatal(err)
				}
			}
			for b.Loop() {
				if d, err := l.Take(ctx, ingest.Caller{}, "videos.list"); err != nil || !d.Allowed {
					b.Fatalf("take: %+v, %v", d, err)
				}
			}
		})
	}
}

package quota_test

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-redis/redis_rate/v10"
	"github.com/redis/go-redis/v9"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/costs"
	"github.com/ingestworks/ingest/internal/rig/redistest"
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
			// The first take after the day is written: a limiter keeps its
			// window in the process from its first decision on, and the day
			// is written here by no limiter, on what may be its connection.
			if _, err := l.Take(ctx, ingest.Caller{}, "videos.list"); err != nil {
				b.Fatal(err)
			}
			for b.Loop() {
				if d, err := l.Take(ctx, ingest.Caller{}, "videos.list"); err != nil || !d.Allowed {
					b.Fatalf("take: %+v, %v", d, err)
				}
			}
		})
	}
}

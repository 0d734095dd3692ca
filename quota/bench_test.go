package quota_test

import (
	"context"
	"fmt"
	"os"
	"sort"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"text/tabwriter"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/internal/redistest"
	"github.com/ingestworks/ingest/quota"
)

// baselineLua is the usual per-unit sliding log: one sorted-set member per
// unit, ZREMRANGEBYSCORE / ZCARD / ZADD. It is what window.lua is measured
// against.
const baselineLua = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local window, limit, cost = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - window)
if redis.call('ZCARD', KEYS[1]) + cost > limit then return 0 end
for i = 1, cost do redis.call('ZADD', KEYS[1], now, ARGV[4] .. ':' .. i) end
redis.call('PEXPIRE', KEYS[1], window + 60000)
return 1
`

var baselineScript = redis.NewScript(baselineLua)

type baseline struct {
	c   *redis.Client
	key string
	seq atomic.Int64
}

func (b *baseline) spend(ctx context.Context, cost int) error {
	id := strconv.FormatInt(b.seq.Add(1), 10)
	return baselineScript.Run(ctx, b.c, []string{b.key}, (24 * time.Hour).Milliseconds(), 100_000_000, cost, id).Err()
}

const (
	latencyOps = 3000
	callers    = 32
	perCaller  = 200
)

var benchOnce sync.Once

// BenchmarkLimiterTable measures window.lua against PING and the per-unit
// baseline on one redis-server in one run, and prints one table.
func BenchmarkLimiterTable(b *testing.B) {
	benchOnce.Do(func() { limiterTable(b) })
	for b.Loop() {
	}
}

func limiterTable(b *testing.B) {
	srv := redistest.Start(b)
	c := redis.NewClient(&redis.Options{Addr: srv.Addr})
	defer c.Close()
	ctx := context.Background()
	big := benchCosts(b, 100_000_000, 0)
	ours1, ours100 := benchLimiter(b, c, "lat1", big), benchLimiter(b, c, "lat100", big)
	base1, base100 := &baseline{c: c, key: "base:lat1"}, &baseline{c: c, key: "base:lat100"}

	ping := latency(b, func() error { return c.Ping(ctx).Err() })
	o1 := latency(b, func() error {
		_, err := ours1.Spend(ctx, "b", []ingest.Charge{{Pool: "default", Units: 1}})
		return err
	})
	o100 := latency(b, func() error {
		_, err := ours100.Spend(ctx, "b", []ingest.Charge{{Pool: "default", Units: 100}})
		return err
	})
	b1 := latency(b, func() error { return base1.spend(ctx, 1) })
	b100 := latency(b, func() error { return base100.spend(ctx, 100) })

	day := benchCosts(b, 10_000, 500)
	memMixed := memory(b, c, benchLimiter(b, c, "mixed", day), 5000, 45)
	memDear := memory(b, c, benchLimiter(b, c, "dear", day), 0, 95)
	baseMixed := baselineMemory(b, c, "base:mixed", 5000, 45)
	baseDear := baselineMemory(b, c, "base:dear", 0, 95)

	pingRate := throughput(b, func() error { return c.Ping(ctx).Err() })
	tp := benchLimiter(b, c, "tp", big)
	oursRate := throughput(b, func() error { _, err := tp.Spend(ctx, "b", []ingest.Charge{{Pool: "default", Units: 1}}); return err })
	baseTP := &baseline{c: c, key: "base:tp"}
	baseRate := throughput(b, func() error { return baseTP.spend(ctx, 1) })

	w := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(w, "\nquota limiter on redis-server %s, one run, one client\t\t\t\t\n", redisVersion(c))
	fmt.Fprintf(w, "measure\tPING\twindow.lua\tper-unit zset\t\n")
	fmt.Fprintf(w, "p50 cost 1 (µs)\t%s\t%s\t%s\t\n", us(ping.p50), us(o1.p50), us(b1.p50))
	fmt.Fprintf(w, "p99 cost 1 (µs)\t%s\t%s\t%s\t\n", us(ping.p99), us(o1.p99), us(b1.p99))
	fmt.Fprintf(w, "p50 cost 100 (µs)\t\t%s\t%s\t\n", us(o100.p50), us(b100.p50))
	fmt.Fprintf(w, "p99 cost 100 (µs)\t\t%s\t%s\t\n", us(o100.p99), us(b100.p99))
	fmt.Fprintf(w, "memory, 5,000x1 + 45x100 day (B)\t\t%d\t%d\t\n", memMixed, baseMixed)
	fmt.Fprintf(w, "memory, 95x100 day (B)\t\t%d\t%d\t\n", memDear, baseDear)
	fmt.Fprintf(w, "decisions/s, %d callers\t%.0f\t%.0f\t%.0f\t\n", callers, pingRate, oursRate, baseRate)
	w.Flush()
	w = tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintf(w, "\nratio\tmeasured\ttarget\tmet\n")
	ratio(w, "p50 cost 1 / PING p50", float64(o1.p50)/float64(ping.p50), 1.6, true)
	ratio(w, "p50 cost 100 / cost 1", float64(o100.p50)/float64(o1.p50), 1.1, true)
	ratio(w, "memory mixed day / baseline", float64(memMixed)/float64(baseMixed), 0.5, true)
	ratio(w, "memory 95x100 day / baseline mixed day", float64(memDear)/float64(baseMixed), 1.0/50, true)
	ratio(w, "throughput / PING throughput", oursRate/pingRate, 0.5, false)
	w.Flush()
}

func benchCosts(b *testing.B, limit, reserve int) *ingest.Costs {
	c, err := ingest.ParseCosts("bench costs", []byte(fmt.Sprintf(`pools: {default: {limit: %d, reserve: %d, window: 24h}}
operations: {videos.list: {default: 1}}`, limit, reserve)))
	if err != nil {
		b.Fatal(err)
	}
	return c
}

func benchLimiter(b *testing.B, c redis.UniversalClient, key string, costs *ingest.Costs) *quota.Redis {
	l, err := quota.NewRedis(c, quota.Options{QuotaKey: key, Costs: costs, Timeout: 5 * time.Second})
	if err != nil {
		b.Fatal(err)
	}
	return l
}

type percentiles struct{ p50, p99 time.Duration }

func latency(b *testing.B, op func() error) percentiles {
	for range 200 { // warm up: connection, script cache
		if err := op(); err != nil {
			b.Fatal(err)
		}
	}
	ds := make([]time.Duration, latencyOps)
	for i := range ds {
		start := time.Now()
		if err := op(); err != nil {
			b.Fatal(err)
		}
		ds[i] = time.Since(start)
	}
	sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
	return percentiles{p50: ds[len(ds)/2], p99: ds[len(ds)*99/100]}
}

func throughput(b *testing.B, op func() error) float64 {
	var wg sync.WaitGroup
	var failed atomic.Bool
	start := time.Now()
	for range callers {
		wg.Go(func() {
			for range perCaller {
				if op() != nil {
					failed.Store(true)
				}
			}
		})
	}
	wg.Wait()
	if failed.Load() {
		b.Fatal("throughput: a call failed")
	}
	return float64(callers*perCaller) / time.Since(start).Seconds()
}

// memory fills a day window with ones 1-unit and hundreds 100-unit calls
// and sums MEMORY USAGE over the limiter's keys.
func memory(b *testing.B, c *redis.Client, l *quota.Redis, ones, hundreds int) int64 {
	ctx := context.Background()
	for i := range ones + hundreds {
		units := int64(1)
		if i%(ones/max(hundreds, 1)+1) == 0 && hundreds > 0 {
			units, hundreds = 100, hundreds-1
		} else if ones == 0 {
			continue
		} else {
			ones--
		}
		if d, err := l.Spend(ctx, "b", []ingest.Charge{{Pool: "default", Units: units}}); err != nil || !d.Allowed {
			b.Fatalf("fill: %+v, %v", d, err)
		}
	}
	for ; hundreds > 0; hundreds-- {
		if d, err := l.Spend(ctx, "b", []ingest.Charge{{Pool: "default", Units: 100}}); err != nil || !d.Allowed {
			b.Fatalf("fill: %+v, %v", d, err)
		}
	}
	var sum int64
	for _, k := range l.Keys() {
		n, err := c.MemoryUsage(ctx, k, 0).Result()
		if err == nil {
			sum += n
		}
	}
	return sum
}

func baselineMemory(b *testing.B, c *redis.Client, key string, ones, hundreds int) int64 {
	bl := &baseline{c: c, key: key}
	for range ones {
		if err := bl.spend(context.Background(), 1); err != nil {
			b.Fatal(err)
		}
	}
	for range hundreds {
		if err := bl.spend(context.Background(), 100); err != nil {
			b.Fatal(err)
		}
	}
	n, err := c.MemoryUsage(context.Background(), key, 0).Result()
	if err != nil {
		b.Fatal(err)
	}
	return n
}

func ratio(w *tabwriter.Writer, name string, got, target float64, atMost bool) {
	met := got <= target
	cmp := "<="
	if !atMost {
		met, cmp = got >= target, ">="
	}
	fmt.Fprintf(w, "%s\t%.3f\t%s %.3f\t%v\n", name, got, cmp, target, met)
}

func us(d time.Duration) string { return fmt.Sprintf("%.1f", float64(d.Nanoseconds())/1000) }

func redisVersion(c *redis.Client) string {
	info, _ := c.Info(context.Background(), "server").Result()
	var v string
	for _, line := range splitLines(info) {
		if len(line) > 14 && line[:14] == "redis_version:" {
			v = line[14:]
		}
	}
	return v
}

func splitLines(s string) []string {
	var out []string
	start := 0
	for i := range len(s) {
		if s[i] == '\n' {
			out = append(out, trimCR(s[start:i]))
			start = i + 1
		}
	}
	return append(out, s[start:])
}

func trimCR(s string) string {
	if len(s) > 0 && s[len(s)-1] == '\r' {
		return s[:len(s)-1]
	}
	return s
}

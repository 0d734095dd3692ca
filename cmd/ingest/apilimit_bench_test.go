package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"path/filepath"
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

	"github.com/ingestworks/ingest/clients"
	"github.com/ingestworks/ingest/internal/rig/pgtest"
	"github.com/ingestworks/ingest/internal/rig/redistest"
	"github.com/ingestworks/ingest/quota"
	"github.com/ingestworks/ingest/ratelimit"
	"github.com/ingestworks/ingest/store"
	"github.com/ingestworks/ingest/web"
	"github.com/ingestworks/ingest/web/throttle"
)

// What the API limiter's table measures: the cheapest route, from this
// many clients at once (each its own address, behind a trusted proxy), in
// rounds of this length, metered and unmetered in turn.
const (
	benchRoute   = "/api/v1"
	benchClients = 16
	benchRound   = 300 * time.Millisecond
	benchRounds  = 9
	benchCap     = 200_000 // requests per client per round, at most
	statCalls    = 20_000  // decisions per side for INFO commandstats
)

// BenchmarkAPILimiter prints what metering costs the cheapest API route
// through a real listener, metered beside unmetered in one run: (a) one
// serve without Redis (SQLite, the limiter in the process), (b) on Redis,
// (c) on PostgreSQL without Redis; and the Redis server's time per
// decision (INFO commandstats) beside go-redis/redis_rate's. Nothing is
// asserted: make bench prints it, with the bars of issue 32.
func BenchmarkAPILimiter(b *testing.B) {
	apiBenchOnce.Do(func() { apiLimiterTable(b, os.Stdout) })
	for b.Loop() {
	}
}

var apiBenchOnce sync.Once

func apiLimiterTable(b *testing.B, w io.Writer) {
	ctx := context.Background()
	lite := benchStore(b, filepath.Join(b.TempDir(), "bench.db"))
	pg := benchStore(b, pgtest.URL(b))
	rs := redistest.Start(b)
	client, err := quota.NewClient("redis://"+rs.Addr+"/0", quota.DefaultTimeout)
	if err != nil {
		b.Fatal(err)
	}
	defer client.Close()
	onRedis := ratelimit.NewRedis(client, quota.DefaultTimeout)
	defer onRedis.Close()
	rows := []benchRow{
		{name: "(a) serve, SQLite, limiter in the process", db: lite, limiter: ratelimit.NewMemory()},
		{name: "(b) serve, SQLite, limiter on Redis", db: lite, limiter: onRedis},
		{name: "(c) serve, PostgreSQL, limiter in it", db: pg, limiter: ratelimit.NewPostgres(pgCounts(pg))},
	}
	for i := range rows {
		rows[i].measure(b)
	}
	printAPITable(w, rows)
	// Its own client, patient: the figure is the server's time, and a
	// decision timed out on a busy machine would be a lost sample.
	statClient, err := quota.NewClient("redis://"+rs.Addr+"/0", 5*time.Second)
	if err != nil {
		b.Fatal(err)
	}
	defer statClient.Close()
	ours, theirs := redisServerTime(ctx, b, statClient)
	fmt.Fprintf(w, "Redis server time per metered request (INFO commandstats, evalsha, %d decisions a side, median of %d rounds in turn):\n", statCalls, benchRounds)
	fmt.Fprintf(w, "  ratelimit gcra.lua %.2f µs, go-redis/redis_rate %.2f µs: %.2fx (bar <= 1.5x: %s)\n", ours, theirs, ours/theirs, met(ours/theirs <= 1.5))
}

func benchStore(b *testing.B, dsn string) *store.DB {
	db, err := store.Open(context.Background(), dsn)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { db.Close() })
	return db
}

// benchPlans admit every request of the run: the limiter decides each
// one in full, and refuses none.
func benchPlans(b *testing.B) *ratelimit.APIPlans {
	plans, err := ratelimit.ParseAPIPlans("bench", []byte("plans:\n  anonymous: {limit: 1000000000, window: 1h, burst: 100000000}\n"))
	if err != nil {
		b.Fatal(err)
	}
	return plans
}

// benchRow is one line of the table: a store, a limiter, and what the
// route measured without and with it.
type benchRow struct {
	name      string
	db        *store.DB
	limiter   ratelimit.Limiter
	off, on   sample
	offR, onR float64
	offT, onT time.Duration
	unmetered atomic.Int64 // metered requests the limiter could not decide
}

type sample []time.Duration

func (s sample) pct(p int) time.Duration {
	slices.Sort(s)
	return s[(len(s)-1)*p/100]
}

// measure runs the unmetered and the metered route in turn, benchRounds
// rounds each, so that the machine's other load falls on both alike.
func (r *benchRow) measure(b *testing.B) {
	plans := benchPlans(b)
	proxies := []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}
	off := benchServer(b, web.Config{DB: r.db, Listen: "127.0.0.1:8080"})
	meter := &throttle.Meter{Plans: plans, Limiter: r.limiter, Tokens: clients.New(r.db), Observe: r.observe}
	if r.limiter.Backend() != "memory" { // as serve wires it
		meter.Lease = throttle.DefaultLease
	}
	on := benchServer(b, web.Config{DB: r.db, Listen: "127.0.0.1:8080", TrustedProxies: proxies, Meter: meter})
	for range benchRounds {
		lat, n, took := load(b, off.URL)
		r.off, r.offR, r.offT = append(r.off, lat...), r.offR+float64(n), r.offT+took
		lat, n, took = load(b, on.URL)
		r.on, r.onR, r.onT = append(r.on, lat...), r.onR+float64(n), r.onT+took
	}
}

func (r *benchRow) observe(_, outcome string) {
	if outcome == "unmetered" {
		r.unmetered.Add(1)
	}
}

func benchServer(b *testing.B, cfg web.Config) *httptest.Server {
	h, err := web.New(cfg)
	if err != nil {
		b.Fatal(err)
	}
	srv := httptest.NewServer(h)
	b.Cleanup(srv.Close)
	return srv
}

// load sends the route from benchClients clients for benchRound and
// returns every request's latency, how many were served, and the time.
func load(b *testing.B, base string) (sample, int, time.Duration) {
	tr := &http.Transport{MaxIdleConnsPerHost: benchClients}
	defer tr.CloseIdleConnections()
	hc := &http.Client{Transport: tr, Timeout: 10 * time.Second}
	var mu sync.Mutex
	var all sample
	var wg sync.WaitGroup
	start := time.Now()
	for c := range benchClients {
		wg.Go(func() {
			lat := make(sample, 0, 4096)
			for i := 0; i < benchCap && time.Since(start) < benchRound; i++ {
				t := time.Now()
				benchGet(b, hc, base, "198.51.100."+strconv.Itoa(c+1))
				lat = append(lat, time.Since(t))
			}
			mu.Lock()
			all = append(all, lat...)
			mu.Unlock()
		})
	}
	wg.Wait()
	return all, len(all), time.Since(start)
}

func benchGet(b *testing.B, hc *http.Client, base, addr string) {
	req, _ := http.NewRequest("GET", base+benchRoute, nil)
	req.Header.Set("X-Forwarded-For", addr)
	res, err := hc.Do(req)
	if err != nil {
		b.Error(err)
		return
	}
	io.Copy(io.Discard, res.Body)
	res.Body.Close()
	if res.StatusCode != 200 {
		b.Errorf("GET %s: status %d", benchRoute, res.StatusCode)
	}
}

func printAPITable(w io.Writer, rows []benchRow) {
	fmt.Fprintf(w, "GET %s, %d clients at once through a real listener, %d rounds of %s each, unmetered and metered in turn\n", benchRoute, benchClients, benchRounds, benchRound)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "case\tp50 µs off / on\tratio\tp99 µs off / on\tratio\treq/s off / on\tratio\tundecided\tbars\t\n")
	for i := range rows {
		r := &rows[i]
		p50, p99 := div(r.on.pct(50), r.off.pct(50)), div(r.on.pct(99), r.off.pct(99))
		offRate, onRate := r.offR/r.offT.Seconds(), r.onR/r.onT.Seconds()
		fmt.Fprintf(tw, "%s\t%.0f / %.0f\t%.2f\t%.0f / %.0f\t%.2f\t%.0f / %.0f\t%.2f\t%d\t%s\t\n", r.name,
			us(r.off.pct(50)), us(r.on.pct(50)), p50, us(r.off.pct(99)), us(r.on.pct(99)), p99, offRate, onRate, onRate/offRate,
			r.unmetered.Load(), bars(r.name, p50, onRate/offRate))
	}
	tw.Flush()
	fmt.Fprintln(w, "undecided: metered requests served unmetered because the limiter did not answer in time (fail open)")
}

// bars are issue 32's: (a) and (b) p50 at most 1.10x and throughput at
// least 0.9x of the unmetered route; (c) throughput at least 0.5x.
func bars(name string, p50, rate float64) string {
	if strings.HasPrefix(name, "(c)") {
		return "req/s >= 0.5x: " + met(rate >= 0.5)
	}
	return fmt.Sprintf("p50 <= 1.10x: %s, req/s >= 0.9x: %s", met(p50 <= 1.10), met(rate >= 0.9))
}

func met(ok bool) string {
	if ok {
		return "met"
	}
	return "MISSED"
}

func div(a, b time.Duration) float64 { return float64(a) / float64(b) }

func us(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1000 }

// redisServerTime is the server's µs per decision, from INFO
// commandstats, for this package's script and for redis_rate's, the same
// number of decisions from the same callers, in turn; medians of
// benchRounds rounds.
func redisServerTime(ctx context.Context, b *testing.B, client redis.UniversalClient) (ours, theirs float64) {
	plan := benchPlans(b).Plans[0]
	gcra := ratelimit.NewRedis(client, quota.DefaultTimeout)
	defer gcra.Close()
	rr := redis_rate.NewLimiter(client)
	lim := redis_rate.Limit{Rate: int(plan.Limit), Burst: int(plan.Burst), Period: plan.Window}
	var o, t []float64
	for range benchRounds {
		o = append(o, serverMicros(b, client, func(k string) error { _, err := gcra.Allow(ctx, plan, k, 1); return err }))
		t = append(t, serverMicros(b, client, func(k string) error { _, err := rr.AllowN(ctx, k, lim, 1); return err }))
	}
	slices.Sort(o)
	slices.Sort(t)
	return o[len(o)/2], t[len(t)/2]
}

// serverMicros makes statCalls decisions from benchClients callers, each
// its own key, and reads the server's µs per EVALSHA.
func serverMicros(b *testing.B, client redis.UniversalClient, decide func(key string) error) float64 {
	ctx := context.Background()
	decide("warm") // loads the script: later calls are EVALSHA
	if err := client.ConfigResetStat(ctx).Err(); err != nil {
		b.Fatal(err)
	}
	var wg sync.WaitGroup
	for c := range benchClients {
		wg.Go(func() {
			for range statCalls / benchClients {
				if err := decide("client-" + strconv.Itoa(c)); err != nil {
					b.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	stats, err := client.Info(ctx, "commandstats").Result()
	if err != nil {
		b.Fatal(err)
	}
	return usecPerCall(stats, "cmdstat_evalsha")
}

// usecPerCall reads usec_per_call of one command from INFO commandstats.
func usecPerCall(info, cmd string) float64 {
	for line := range strings.Lines(info) {
		if rest, ok := strings.CutPrefix(strings.TrimSpace(line), cmd+":"); ok {
			for _, f := range strings.Split(rest, ",") {
				if v, ok := strings.CutPrefix(f, "usec_per_call="); ok {
					n, _ := strconv.ParseFloat(v, 64)
					return n
				}
			}
		}
	}
	return 0
}

func pgCounts(db *store.DB) clients.Counts {
	c, _ := clients.New(db).Counts()
	return c
}

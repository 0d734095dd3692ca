package web

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ingestworks/ingest/clients"
	"github.com/ingestworks/ingest/clock"
	"github.com/ingestworks/ingest/ratelimit"
	"github.com/ingestworks/ingest/store"
	"github.com/ingestworks/ingest/web/throttle"
)

// What the serving table measures: each route through a real listener on
// loopback, gzip asked, from this many clients at once, in rounds of this
// length, our server and one that hands out the same bytes from memory in
// turn.
const (
	serveRound  = 400 * time.Millisecond
	serveRounds = 3
	serveCap    = 100_000 // requests per client per round, at most
)

// BenchmarkServeFromMemory serves /, /charts/US, /api/v1/charts/US and a
// search from the database INGEST_BENCH_SERVE_DB names (the demo's, or
// cmd/yeardb's), as a --public listener does, beside a server in the same
// run that answers the same bytes from memory; and a metered anonymous
// read of the chart's JSON beside an unmetered one. It reports req/s,
// p50 and p99 of each, and their ratio; nothing is asserted: make bench
// prints the table.
func BenchmarkServeFromMemory(b *testing.B) {
	path := os.Getenv("INGEST_BENCH_SERVE_DB")
	if path == "" {
		b.Skip("INGEST_BENCH_SERVE_DB names the database (scripts/bench.sh makes the demo's)")
	}
	ctx := context.Background()
	db, err := store.OpenExisting(ctx, path)
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	ours := serveBenchServer(b, Config{Clock: clock.System, DB: db, Listen: "127.0.0.1:0"}) // loopback, no token: every route open, unmetered
	for _, route := range []string{"/", "/charts/US", "/api/v1/charts/US", "/search?q=football"} {
		mem := memoryServer(b, ours.URL+route)
		for _, clients := range []int{16, 64} {
			b.Run(fmt.Sprintf("route=%s/clients=%d", route, clients), func(b *testing.B) {
				us, them := race(b, clients, ours.URL+route, mem.URL+route)
				reportLoads(b, us, them)
			})
		}
	}
	plans, err := ratelimit.ParseAPIPlans("bench.yaml", []byte("plans:\n  anonymous: {limit: 1000000000, window: 1h}\n"))
	if err != nil {
		b.Fatal(err)
	}
	proxies := []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}
	metered := serveBenchServer(b, Config{Clock: clock.System, DB: db, Listen: "127.0.0.1:0", Public: true, TrustedProxies: proxies,
		Meter: &throttle.Meter{Plans: plans, Limiter: ratelimit.NewMemory(), Tokens: clients.New(db)}})
	for _, clients := range []int{16, 64} {
		b.Run(fmt.Sprintf("metered=/api/v1/charts/US/clients=%d", clients), func(b *testing.B) {
			us, them := race(b, clients, metered.URL+"/api/v1/charts/US", ours.URL+"/api/v1/charts/US")
			reportLoads(b, us, them)
		})
	}
}

func serveBenchServer(b *testing.B, cfg Config) *httptest.Server {
	s, err := New(cfg)
	if err != nil {
		b.Fatal(err)
	}
	srv := httptest.NewServer(s)
	b.Cleanup(srv.Close)
	return srv
}

// memoryServer answers every request with what url answered a gzip
// request: the same header and bytes, from memory.
func memoryServer(b *testing.B, url string) *httptest.Server {
	req, _ := http.NewRequest("GET", url, nil)
	req.Header.Set("Accept-Encoding", "gzip")
	res, err := http.DefaultTransport.RoundTrip(req)
	if err != nil {
		b.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != 200 {
		b.Fatalf("%s: %d", url, res.StatusCode)
	}
	hdr := res.Header.Clone()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		for k, v := range hdr {
			w.Header()[k] = v
		}
		w.Write(body)
	}))
	b.Cleanup(srv.Close)
	return srv
}

// load is what one side answered: how many, in how long, each's latency.
type load struct {
	n    int
	took time.Duration
	lat  []time.Duration
}

// race loads a and b in turn, serveRounds rounds each, from clients at
// once.
func race(b *testing.B, clients int, a, other string) (load, load) {
	tr := &http.Transport{MaxIdleConnsPerHost: clients, MaxConnsPerHost: clients, DisableCompression: true}
	defer tr.CloseIdleConnections()
	var la, lb load
	for range serveRounds {
		round(b, tr, clients, a, &la)
		round(b, tr, clients, other, &lb)
	}
	return la, lb
}

func round(b *testing.B, tr *http.Transport, clients int, url string, l *load) {
	var wg sync.WaitGroup
	var failed atomic.Value
	lats := make([][]time.Duration, clients)
	stop := time.Now().Add(serveRound)
	t0 := time.Now()
	for c := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < serveCap && time.Now().Before(stop); i++ {
				req, _ := http.NewRequest("GET", url, nil)
				req.Header.Set("Accept-Encoding", "gzip")
				req.Header.Set("X-Forwarded-For", fmt.Sprintf("10.0.%d.%d", c/250, c%250+1))
				t := time.Now()
				res, err := tr.RoundTrip(req)
				if err != nil {
					failed.Store(err.Error())
					return
				}
				io.Copy(io.Discard, res.Body)
				res.Body.Close()
				if res.StatusCode != 200 {
					failed.Store(fmt.Sprintf("%s: %d", url, res.StatusCode))
					return
				}
				lats[c] = append(lats[c], time.Since(t))
			}
		}()
	}
	wg.Wait()
	if f := failed.Load(); f != nil {
		b.Fatal(f)
	}
	l.took += time.Since(t0)
	for _, ls := range lats {
		l.n += len(ls)
		l.lat = append(l.lat, ls...)
	}
}

func (l load) rate() float64 { return float64(l.n) / l.took.Seconds() }

func (l load) pct(p int) float64 {
	slices.Sort(l.lat)
	if len(l.lat) == 0 {
		return 0
	}
	return ms(l.lat[min(len(l.lat)-1, len(l.lat)*p/100)])
}

// reportLoads writes ours and the baseline's figures and their ratio.
func reportLoads(b *testing.B, us, them load) {
	b.ReportMetric(us.rate(), "req/s")
	b.ReportMetric(us.pct(50), "p50-ms")
	b.ReportMetric(us.pct(99), "p99-ms")
	b.ReportMetric(them.rate(), "base-req/s")
	b.ReportMetric(them.pct(50), "base-p50-ms")
	b.ReportMetric(them.pct(99), "base-p99-ms")
	b.ReportMetric(us.rate()/them.rate(), "ratio")
	b.ReportMetric(0, "ns/op")
}

// BenchmarkMeteredRead is a kept chart's JSON served in the process (no
// listener, so that the network's noise does not hide the meter's cost),
// an anonymous reader metered by the in-process limiter (serve's on
// SQLite without Redis) beside the same read unmetered, from the database
// INGEST_BENCH_SERVE_DB names.
func BenchmarkMeteredRead(b *testing.B) {
	path := os.Getenv("INGEST_BENCH_SERVE_DB")
	if path == "" {
		b.Skip("INGEST_BENCH_SERVE_DB names the database (scripts/bench.sh makes the demo's)")
	}
	db, err := store.OpenExisting(context.Background(), path)
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	plans, err := ratelimit.ParseAPIPlans("bench.yaml", []byte("plans:\n  anonymous: {limit: 1000000000, window: 1h}\n"))
	if err != nil {
		b.Fatal(err)
	}
	for _, m := range []bool{false, true} {
		// Unmetered is the same routes open on loopback: a --public
		// listener is always metered.
		cfg := Config{Clock: clock.System, DB: db, Listen: "127.0.0.1:0", TrustedProxies: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}}
		if m {
			cfg.Public = true
			cfg.Meter = &throttle.Meter{Plans: plans, Limiter: ratelimit.NewMemory(), Tokens: clients.New(db)}
		}
		s, err := New(cfg)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(map[bool]string{false: "unmetered", true: "metered"}[m], func(b *testing.B) {
			for b.Loop() {
				req := httptest.NewRequest("GET", "/api/v1/charts/US", nil)
				req.Header.Set("Accept-Encoding", "gzip")
				req.RemoteAddr = "127.0.0.1:1"
				req.Header.Set("X-Forwarded-For", "10.0.0.1")
				rec := httptest.NewRecorder()
				s.ServeHTTP(rec, req)
				if rec.Code != 200 {
					b.Fatal(rec.Code)
				}
			}
		})
	}
}

package main

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/internal/redistest"
	"github.com/ingestworks/ingest/quota"
	"github.com/ingestworks/ingest/store"
	"github.com/ingestworks/ingest/web"
)

// BenchmarkAPILimiter measures what the API's limiter adds to a request:
// the same route (GET /api/v1/runs) served unlimited, under the embedded
// limiter and under Redis, in process. Each reports the p50 and p99 of a
// request and, in parallel, requests/s when saturated.
func BenchmarkAPILimiter(b *testing.B) {
	ctx := context.Background()
	db, err := store.Open(ctx, filepath.Join(b.TempDir(), "bench.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	plans, err := ingest.ParseAPIPlans("bench", []byte("plans:\n  anonymous: {limit: 1000000000, window: 1h}\n"))
	if err != nil {
		b.Fatal(err)
	}
	rs := redistest.Start(b)
	client, err := quota.NewClient("redis://"+rs.Addr+"/0", quota.DefaultTimeout)
	if err != nil {
		b.Fatal(err)
	}
	defer client.Close()
	limiters := []struct {
		name string
		open func(quota.Options) (quota.Limiter, error)
	}{
		{"unlimited", nil},
		{"sqlite", func(o quota.Options) (quota.Limiter, error) { return quota.NewSQLite(db.Writer(), o) }},
		{"redis", func(o quota.Options) (quota.Limiter, error) { return quota.NewRedis(client, o) }},
	}
	for _, l := range limiters {
		cfg := web.Config{DB: db, Listen: "127.0.0.1:8080"}
		if l.open != nil {
			cfg.Meter = &web.Meter{Plans: plans, Limiter: newAPILimiter(l.open, slog.New(slog.DiscardHandler)), Tokens: db}
		}
		srv, err := web.New(cfg)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(l.name+"/latency", func(b *testing.B) { benchLatency(b, srv) })
		b.Run(l.name+"/saturated", func(b *testing.B) { benchSaturated(b, srv) })
	}
}

func apiRequest(b *testing.B, srv http.Handler) {
	req := httptest.NewRequest("GET", "/api/v1/runs?limit=1", nil)
	req.RemoteAddr = "192.0.2.1:1234"
	rec := httptest.NewRecorder()
	srv.ServeHTTP(rec, req)
	if rec.Code != 200 {
		b.Fatalf("status %d: %s", rec.Code, rec.Body)
	}
}

func benchLatency(b *testing.B, srv http.Handler) {
	apiRequest(b, srv) // the first opens the client's limiter
	took := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for range b.N {
		t := time.Now()
		apiRequest(b, srv)
		took = append(took, time.Since(t))
	}
	slices.Sort(took)
	b.ReportMetric(float64(took[len(took)/2].Microseconds()), "p50-us")
	b.ReportMetric(float64(took[len(took)*99/100].Microseconds()), "p99-us")
}

func benchSaturated(b *testing.B, srv http.Handler) {
	start := time.Now()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			apiRequest(b, srv)
		}
	})
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "req/s")
}

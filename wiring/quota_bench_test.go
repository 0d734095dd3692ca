package wiring_test

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/clock"
	"github.com/ingestworks/ingest/costs"
	"github.com/ingestworks/ingest/internal/rig/yeardb"
	"github.com/ingestworks/ingest/ledger"
	"github.com/ingestworks/ingest/ratelimit"
	"github.com/ingestworks/ingest/store"
	"github.com/ingestworks/ingest/web"
	"github.com/ingestworks/ingest/wiring"
)

// BenchmarkQuotaAPI asks /api/v1/quota of the server serve builds (its
// report's ledger reads kept while the ledger stays the same) over the
// databases of scripts/bench-scale.sh, 8 regions ("day") and every
// region ("year"), taking turns, and reports each one's p50. With
// INGEST_BENCH_PG_DAY_URL and INGEST_BENCH_PG_YEAR_URL it reads those
// PostgreSQL copies instead. The first request, which reads the ledger,
// is timed apart (first-ms). The cold ones ("day/cold", "year/cold") write
// a call to the ledger before each request, so that each is the first
// after a change: "follow" as serve builds it, reading the ledger in write
// order, "whole" the baseline that reads the window whole after each
// change.
func BenchmarkQuotaAPI(b *testing.B) {
	const benchToken = "a-bench-token-of-twenty-chars"
	ctx := context.Background()
	servers := map[string]http.Handler{}
	leds := map[string]*ledger.Ledger{}
	for _, size := range []string{"day", "year"} {
		up := strings.ToUpper(size)
		path := os.Getenv("INGEST_BENCH_" + up + "_DB")
		if path == "" {
			b.Skip("INGEST_BENCH_DAY_DB and INGEST_BENCH_YEAR_DB name the databases (scripts/bench-scale.sh builds them)")
		}
		if u := os.Getenv("INGEST_BENCH_PG_" + up + "_URL"); u != "" {
			path = u
		}
		db, err := store.OpenExisting(ctx, path)
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { db.Close() })
		wdb, err := store.Open(ctx, path) // the servers' is read-only; the cold ones' calls are written beside them
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { wdb.Close() })
		leds[size] = ledger.New(wdb)
		for _, mode := range []string{"", "/cold/follow", "/cold/whole"} {
			restore := wiring.FollowLedger(mode != "/cold/whole")
			h := &wiring.Host{Clock: clock.System, Costs: costs.Default(), Logger: slog.New(slog.DiscardHandler)}
			ui, closeFn, err := h.OpenWeb(ctx, wiring.On(db, ""), wiring.Serve{Plans: ratelimit.DefaultAPIPlans(), QuotaKey: yeardb.QuotaKey,
				Web: web.Config{Listen: "127.0.0.1:0", Token: benchToken}})
			restore()
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(closeFn)
			servers[size+mode] = ui
		}
	}
	for _, size := range []string{"day", "year"} {
		b.Run(size, func(b *testing.B) { askQuota(b, servers[size], benchToken, nil) })
	}
	for _, size := range []string{"day", "year"} {
		for _, mode := range []string{"/cold/follow", "/cold/whole"} {
			b.Run(size+mode, func(b *testing.B) {
				n := 0
				askQuota(b, servers[size+mode], benchToken, func() {
					n++
					call := ingest.Call{QuotaKey: yeardb.QuotaKey, ID: fmt.Sprintf("bench-%s-%d-%d", mode, time.Now().UnixNano(), n),
						Op: "videos.list", At: time.Now(), Charges: []ingest.Charge{{Pool: ingest.DefaultPool, Units: 1}}}
					if err := leds[size].RecordCall(ctx, call); err != nil {
						b.Fatal(err)
					}
				})
			})
		}
	}
}

// askQuota asks /api/v1/quota of ui in a loop, each time after before
// (untimed) when it is not nil, and reports the p50, the p90 and the
// first.
func askQuota(b *testing.B, ui http.Handler, token string, before func()) {
	var took []time.Duration
	for b.Loop() {
		if before != nil {
			b.StopTimer()
			before()
			b.StartTimer()
		}
		req := httptest.NewRequest("GET", "/api/v1/quota", nil)
		req.Header.Set("Authorization", "Bearer "+token) // the operator: not metered
		rec := httptest.NewRecorder()
		t0 := time.Now()
		ui.ServeHTTP(rec, req)
		took = append(took, time.Since(t0))
		if rec.Code != http.StatusOK {
			b.Fatalf("/api/v1/quota: %d %.300s", rec.Code, rec.Body.String())
		}
	}
	first := took[0]
	slices.Sort(took)
	b.ReportMetric(float64(took[len(took)/2].Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(took[len(took)*9/10].Microseconds())/1000, "p90-ms")
	b.ReportMetric(float64(first.Microseconds())/1000, "first-ms")
}

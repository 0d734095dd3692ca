package wiring_test

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ingestworks/ingest/costs"
	"github.com/ingestworks/ingest/internal/yeardb"
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
// is timed apart (first-ms).
func BenchmarkQuotaAPI(b *testing.B) {
	const benchToken = "a-bench-token-of-twenty-chars"
	ctx := context.Background()
	servers := map[string]http.Handler{}
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
		h := &wiring.Host{Costs: costs.Default(), Logger: slog.New(slog.DiscardHandler)}
		ui, closeFn, err := h.OpenWeb(ctx, db, wiring.Serve{Plans: ratelimit.DefaultAPIPlans(), QuotaKey: yeardb.QuotaKey,
			Web: web.Config{Listen: "127.0.0.1:0", Token: benchToken}})
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(closeFn)
		servers[size] = ui
	}
	for _, size := range []string{"day", "year"} {
		b.Run(size, func(b *testing.B) {
			var took []time.Duration
			for b.Loop() {
				req := httptest.NewRequest("GET", "/api/v1/quota", nil)
				req.Header.Set("Authorization", "Bearer "+benchToken) // the operator: not metered
				rec := httptest.NewRecorder()
				t0 := time.Now()
				servers[size].ServeHTTP(rec, req)
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
		})
	}
}

package wiring_test

import (
	"context"
	"log/slog"
	"os"
	"strings"
	"testing"

	"github.com/ingestworks/ingest/clock"
	"github.com/ingestworks/ingest/costs"
	"github.com/ingestworks/ingest/internal/rig/storetest"
	"github.com/ingestworks/ingest/ratelimit"
	"github.com/ingestworks/ingest/web"
	"github.com/ingestworks/ingest/wiring"
)

// TestServeRoutesAreDocumented walks every route serve's server registers,
// its own and the ones wiring adds, and fails on one that docs/api.md's
// table of who may reach each route does not list.
func TestServeRoutesAreDocumented(t *testing.T) {
	ctx := context.Background()
	db := storetest.Open(t)
	h := &wiring.Host{Clock: clock.System, Costs: costs.Default(), Logger: slog.New(slog.DiscardHandler)}
	ui, closeFn, err := h.OpenWeb(ctx, wiring.On(db, ""), wiring.Serve{Plans: ratelimit.DefaultAPIPlans(), QuotaKey: "k",
		Web: web.Config{Listen: ":8080", Public: true, Token: "a-token-of-twenty-chars-1"}})
	if err != nil {
		t.Fatal(err)
	}
	defer closeFn()
	b, err := os.ReadFile("../docs/api.md")
	if err != nil {
		t.Fatal(err)
	}
	_, table, _ := strings.Cut(string(b), "\n| Route | Audience |")
	table, _, _ = strings.Cut(table, "\n\n")
	for _, rt := range ui.Routes() {
		if !strings.Contains(table, "| `"+rt.Pattern+"` |") {
			t.Errorf("serve registers %q, which docs/api.md's table of who may reach each route does not list", rt.Pattern)
		}
	}
}

package wiring

import (
	"context"
	"maps"
	"net/http"
	"slices"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/clients"
	"github.com/ingestworks/ingest/metrics"
	"github.com/ingestworks/ingest/proxy"
	"github.com/ingestworks/ingest/ratelimit"
)

// Proxy is `ingest proxy` as its checked flags give it.
type Proxy struct {
	APIKey   string // YOUTUBE_API_KEY, the key the clients' calls are sent with
	QuotaKey string
	// Plans are the tokens' plans (--api-plans), their proxy: sections
	// each client's budget.
	Plans   *ratelimit.APIPlans
	Options proxy.Options
}

// OpenProxy builds the proxy on the pipeline a run spends through (the
// database, its limiter, the upstream's client, all checked as for a
// run), so that the clients' calls and the daemon's draw from one limiter
// and one ledger; close releases it.
func (h *Host) OpenProxy(ctx context.Context, px Proxy) (http.Handler, func(), error) {
	pools := make([]string, len(h.Costs.Pools))
	for i, p := range h.Costs.Pools {
		pools[i] = p.Name
	}
	if err := px.Plans.CheckProxy(pools, slices.Sorted(maps.Keys(h.Costs.Operations))); err != nil {
		return nil, nil, ingest.ConfigErrorf("--api-plans: %w", err)
	}
	p, err := h.OpenPipeline(ctx, px.APIKey, px.QuotaKey)
	if err != nil {
		return nil, nil, err
	}
	if px.Options.Logger == nil {
		px.Options.Logger = h.Logger
	}
	px.Options.Plans, px.Options.Books, px.Options.State = px.Plans, p.DB.Ledger, p.Limiter.State
	m := metrics.NewProxy()
	px.Options.Observe = m.Observe
	mux := http.NewServeMux()
	mux.Handle("/", proxy.New(p.Limiter, p.QuotaKey, h.Costs, p.Source, clients.New(p.DB), h.clock(), px.Options))
	mux.Handle("GET /metrics", m.Handler())
	return mux, p.Close, nil
}

package wiring

import (
	"context"
	"net/http"

	"github.com/ingestworks/ingest/clients"
	"github.com/ingestworks/ingest/proxy"
)

// Proxy is `ingest proxy` as its checked flags give it.
type Proxy struct {
	APIKey   string // YOUTUBE_API_KEY, the key the clients' calls are sent with
	QuotaKey string
	Options  proxy.Options
}

// OpenProxy builds the proxy on the pipeline a run spends through (the
// database, its limiter, the upstream's client, all checked as for a
// run), so that the clients' calls and the daemon's draw from one limiter
// and one ledger; close releases it.
func (h *Host) OpenProxy(ctx context.Context, px Proxy) (http.Handler, func(), error) {
	p, err := h.OpenPipeline(ctx, px.APIKey, px.QuotaKey)
	if err != nil {
		return nil, nil, err
	}
	if px.Options.Logger == nil {
		px.Options.Logger = h.Logger
	}
	return proxy.New(p.Limiter, p.QuotaKey, h.Costs, p.Source, clients.New(p.DB), h.clock(), px.Options), p.Close, nil
}

package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net/netip"
	"strings"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/quota"
	"github.com/ingestworks/ingest/web"
)

// apiKeyPrefix starts every quota key of the read API's clients: a
// namespace of its own, so that API traffic never draws from the
// upstream's pools.
const apiKeyPrefix = "api."

// apiLimiterCache is how many clients' limiters are kept; a limiter holds
// no state that a new one would not find in the backend.
const apiLimiterCache = 4096

// apiLimiter is the quota package deciding for the read API: one quota
// key per plan and client ("api.<plan>.<client>"), whose only pool is the
// plan. serve owns these keys' configuration: it writes it when the
// backend has none or holds another.
type apiLimiter struct {
	open func(opts quota.Options) (quota.Limiter, error)
	opts quota.Options // QuotaKey and Costs are set per client

	mu    sync.Mutex
	cache map[string]quota.Limiter
}

func newAPILimiter(open func(quota.Options) (quota.Limiter, error), logger *slog.Logger) *apiLimiter {
	return &apiLimiter{open: open, opts: quota.Options{Logger: logger, Disposable: true}, cache: map[string]quota.Limiter{}}
}

// Spend decides one request of client on plan.
func (a *apiLimiter) Spend(ctx context.Context, plan ingest.APIPlan, client string, units int64) (ingest.Decision, error) {
	l, err := a.limiter(plan, apiKeyPrefix+plan.Name+"."+client)
	if err != nil {
		return ingest.Decision{}, err
	}
	charges := []ingest.Charge{{Pool: plan.Name, Units: units}}
	d, err := l.Spend(ctx, "api", charges)
	var ce *quota.ConfigError
	if errors.Is(err, quota.ErrNotApplied) || errors.As(err, &ce) {
		if _, err := l.ApplyConfig(ctx); err != nil {
			return d, fmt.Errorf("api limiter: %w", err)
		}
		d, err = l.Spend(ctx, "api", charges)
	}
	return d, err
}

// limiter returns the cached limiter of key, or opens one.
func (a *apiLimiter) limiter(plan ingest.APIPlan, key string) (quota.Limiter, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if l, ok := a.cache[key]; ok {
		return l, nil
	}
	if len(a.cache) >= apiLimiterCache {
		for k := range a.cache { // any one: map order is random
			delete(a.cache, k)
			break
		}
	}
	opts := a.opts
	opts.QuotaKey, opts.Costs = key, plan.Costs()
	l, err := a.open(opts)
	if err != nil {
		return nil, err
	}
	a.cache[key] = l
	return l, nil
}

// parseTrustedProxies reads --trusted-proxies: CIDRs or single addresses,
// comma-separated.
func parseTrustedProxies(s string) ([]netip.Prefix, error) {
	var out []netip.Prefix
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f == "" {
			continue
		}
		p, err := netip.ParsePrefix(f)
		if err != nil {
			a, aerr := netip.ParseAddr(f)
			if aerr != nil {
				return nil, usageErrorf("--trusted-proxies: want CIDRs or addresses, comma-separated (10.0.0.0/8,::1), got %q", f)
			}
			p = netip.PrefixFrom(a.Unmap(), a.Unmap().BitLen())
		}
		out = append(out, p.Masked())
	}
	return out, nil
}

// apiMetrics counts the read API's metered requests, on serve's /metrics.
type apiMetrics struct {
	reg      *prometheus.Registry
	requests *prometheus.CounterVec
}

func newAPIMetrics() *apiMetrics {
	m := &apiMetrics{reg: prometheus.NewRegistry(),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "ingest_api_requests_total",
			Help: "Metered API requests by plan and outcome: allowed, refused (429), unmetered (the limiter could not decide)."},
			[]string{"plan", "outcome"})}
	m.reg.MustRegister(m.requests)
	return m
}

func (m *apiMetrics) observe(plan, outcome string) { m.requests.WithLabelValues(plan, outcome).Inc() }

func (m *apiMetrics) route() web.Route {
	return web.Route{Pattern: "GET /metrics", Kind: web.Operational, Handler: promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{})}
}

// randomID names this process's ledger to the API's Redis limiter.
func randomID() string {
	b := make([]byte, 6)
	rand.Read(b)
	return hex.EncodeToString(b)
}

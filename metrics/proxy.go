package metrics

import (
	"net/http"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Proxy is ingest proxy's series: what each client's calls took or asked
// of the upstream's quota, by outcome.
type Proxy struct {
	reg   *prometheus.Registry
	units *prometheus.CounterVec
	calls *prometheus.CounterVec
}

// NewProxy returns the proxy's series, at zero, in a registry of their own
// beside the Go runtime's and the process's.
func NewProxy() *Proxy {
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	m := &Proxy{reg: reg,
		units: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "ingest_proxy_units_total",
			Help: "Units of the upstream's quota the proxy's clients' calls took (forwarded, failed: charged) or asked (refused: never sent), by client and outcome."},
			[]string{"client", "outcome"}),
		calls: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "ingest_proxy_calls_total",
			Help: "The proxy's clients' calls by client and outcome: forwarded, refused (never sent), failed (sent, no answer)."},
			[]string{"client", "outcome"})}
	reg.MustRegister(m.units, m.calls)
	return m
}

// Observe counts one call of client with its outcome and units (the
// proxy's Options.Observe).
func (m *Proxy) Observe(client, outcome string, units int64) {
	m.calls.WithLabelValues(client, outcome).Inc()
	m.units.WithLabelValues(client, outcome).Add(float64(units))
}

// Handler serves the proxy's series in Prometheus's format.
func (m *Proxy) Handler() http.Handler { return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{}) }

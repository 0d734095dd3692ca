package metrics

import (
	"net/http"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// API counts the read API's metered requests, on serve's /metrics: a
// registry of its own, as serve runs no passes.
type API struct {
	reg      *prometheus.Registry
	requests *prometheus.CounterVec
	auth     *prometheus.CounterVec
}

// NewAPI returns the API's counters, at zero, beside the Go runtime's and
// the process's series (memory, threads, open files), as the daemon's.
func NewAPI() *API {
	m := &API{reg: prometheus.NewRegistry(),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "ingest_api_requests_total",
			Help: "Metered API requests by plan and outcome: allowed, refused (429), unmetered (the limiter could not decide)."},
			[]string{"plan", "outcome"}),
		auth: newAuthFailures()}
	m.reg.MustRegister(m.requests, m.auth,
		prometheus.NewGoCollector(), prometheus.NewProcessCollector(prometheus.ProcessCollectorOpts{}))
	return m
}

// Observe counts one metered request of plan: allowed, refused or
// unmetered (the web Meter's Observe).
func (m *API) Observe(plan, outcome string) { m.requests.WithLabelValues(plan, outcome).Inc() }

// Handler serves the counters in Prometheus's format.
func (m *API) Handler() http.Handler { return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{}) }

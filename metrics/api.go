package metrics

import (
	"net/http"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// API counts what the site meters: the API's requests by plan and
// outcome, and failed attempts at the access token. The same series live
// on serve's /metrics and on the daemon's, registered in the registry of
// the /metrics that serves them.
type API struct {
	reg      *prometheus.Registry
	requests *prometheus.CounterVec
	auth     *prometheus.CounterVec
}

// NewAPI returns serve's series, at zero, in a registry of their own
// beside the Go runtime's and the process's series (memory, threads, open
// files), as the daemon's: serve runs no passes.
func NewAPI() *API {
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return newAPI(reg)
}

// newAPI registers the site's series in reg.
func newAPI(reg *prometheus.Registry) *API {
	m := &API{reg: reg,
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "ingest_api_requests_total",
			Help: "Metered API requests by plan and outcome: allowed, refused (429), unmetered (the limiter could not decide)."},
			[]string{"plan", "outcome"}),
		auth: newAuthFailures()}
	reg.MustRegister(m.requests, m.auth)
	return m
}

// Observe counts one metered request of plan: allowed, refused or
// unmetered (the web Meter's Observe).
func (m *API) Observe(plan, outcome string) { m.requests.WithLabelValues(plan, outcome).Inc() }

// Handler serves serve's series in Prometheus's format.
func (m *API) Handler() http.Handler { return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{}) }

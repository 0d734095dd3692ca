package metrics

import "github.com/prometheus/client_golang/prometheus"

// AuthOutcomes are the outcomes of a failed attempt at the access token
// (INGEST_UI_TOKEN): compared and wrong, or not compared because the
// address, or every address, waits (docs/reference/api/limits.md, "Failed sign-ins").
var AuthOutcomes = []string{"rejected", "throttled"}

// newAuthFailures is ingest_ui_auth_failures_total, the same series on
// serve's /metrics and on run --listen's, every outcome from zero so
// that a rate can be taken before the first failure.
func newAuthFailures() *prometheus.CounterVec {
	c := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "ingest_ui_auth_failures_total",
		Help: "Failed attempts at the access token (sign-ins and bearer tokens) by outcome: rejected (wrong), throttled (not checked: too many failures)."},
		[]string{"outcome"})
	for _, o := range AuthOutcomes {
		c.WithLabelValues(o)
	}
	return c
}

// AuthFailed counts a failed attempt at the site's access token (the web
// Config's AuthFailed).
func (m *API) AuthFailed(outcome string) { m.auth.WithLabelValues(outcome).Inc() }

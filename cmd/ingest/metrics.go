package main

import (
	"context"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/regions"
)

// metrics are what `ingest run --listen` serves on /metrics.
type metrics struct {
	reg       *prometheus.Registry
	spent     *prometheus.CounterVec
	decisions *prometheus.CounterVec
	runs      *prometheus.CounterVec
	duration  *prometheus.HistogramVec
	lag       *prometheus.GaugeVec
	schedules map[string]regions.Schedule
}

func newMetrics() *metrics {
	m := &metrics{
		reg: prometheus.NewRegistry(),
		spent: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "ingest_quota_units_spent_total",
			Help: "Units admitted by the limiter, by pool."}, []string{"pool"}),
		decisions: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "ingest_quota_decisions_total",
			Help: "Limiter decisions by operation and outcome (allowed, refused, unmetered, error)."}, []string{"op", "outcome"}),
		runs: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "ingest_runs_total",
			Help: "Region passes by status."}, []string{"region", "status"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "ingest_run_duration_seconds",
			Help: "Wall time of region passes.", Buckets: prometheus.ExponentialBuckets(0.05, 2, 12)}, []string{"region"}),
		lag: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "ingest_schedule_lag_seconds",
			Help: "How late the latest pass started after its scheduled slot."}, []string{"region"}),
		schedules: map[string]regions.Schedule{},
	}
	m.reg.MustRegister(m.spent, m.decisions, m.runs, m.duration, m.lag,
		prometheus.NewGoCollector(), prometheus.NewProcessCollector(prometheus.ProcessCollectorOpts{}))
	return m
}

func (m *metrics) observe(res regions.Result, took time.Duration) {
	m.runs.WithLabelValues(res.Region, res.Status).Inc()
	m.duration.WithLabelValues(res.Region).Observe(took.Seconds())
	if s, ok := m.schedules[res.Region]; ok {
		start := time.Now().Add(-took)
		m.lag.WithLabelValues(res.Region).Set(start.Sub(s.Prev(start)).Seconds())
	}
}

func (m *metrics) decided(op string, d ingest.Decision, err error) {
	outcome := "allowed"
	switch {
	case err != nil:
		outcome = "error"
	case !d.Allowed:
		outcome = "refused"
	case d.Unmetered:
		outcome = "unmetered"
	}
	m.decisions.WithLabelValues(op, outcome).Inc()
	if err == nil && d.Allowed {
		for _, c := range d.Charges {
			m.spent.WithLabelValues(c.Pool).Add(float64(c.Units))
		}
	}
}

// handler serves the registry plus the pools' remaining units, read from
// the limiter at scrape time.
func (m *metrics) handler(l limiter) http.Handler {
	reg := prometheus.NewRegistry()
	reg.MustRegister(&remainingCollector{l: l})
	return promhttp.HandlerFor(prometheus.Gatherers{m.reg, reg}, promhttp.HandlerOpts{})
}

var remainingDesc = prometheus.NewDesc("ingest_quota_remaining_units",
	"Units the limiter can still admit in the trailing window, by pool.", []string{"pool"}, nil)

type remainingCollector struct{ l limiter }

func (c *remainingCollector) Describe(ch chan<- *prometheus.Desc) { ch <- remainingDesc }

func (c *remainingCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	pools, err := c.l.State(ctx)
	if err != nil {
		ch <- prometheus.NewInvalidMetric(remainingDesc, err)
		return
	}
	for _, p := range pools {
		ch <- prometheus.MustNewConstMetric(remainingDesc, prometheus.GaugeValue, float64(p.Remaining), p.Pool)
	}
}

// meteredLimiter counts the decisions of the limiter it wraps.
type meteredLimiter struct {
	next limiter
	m    *metrics
}

var _ regions.Limiter = (*meteredLimiter)(nil)

func (l *meteredLimiter) Take(ctx context.Context, op string) (ingest.Decision, error) {
	d, err := l.next.Take(ctx, op)
	l.m.decided(op, d, err)
	return d, err
}

func (l *meteredLimiter) Block(ctx context.Context, pool string) (time.Time, error) {
	return l.next.Block(ctx, pool)
}

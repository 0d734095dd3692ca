package main

import (
	"context"
	"net/http"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/jobs"
	"github.com/ingestworks/ingest/store"
)

// failingAfter is how many failed passes in a row make a region "failing
// repeatedly" for /readyz.
const failingAfter = 3

// metrics are what `ingest run --listen` serves on /metrics. Every series
// is in seconds and units; a source that cannot be read (the limiter)
// becomes a series saying so, never a failed scrape.
type metrics struct {
	reg         *prometheus.Registry
	spent       *prometheus.CounterVec
	decisions   *prometheus.CounterVec
	runs        *prometheus.CounterVec
	duration    *prometheus.HistogramVec
	lag         *prometheus.GaugeVec
	lastSuccess *prometheus.GaugeVec
	failures    *prometheus.GaugeVec
	jobRuns     *prometheus.CounterVec

	mu          sync.Mutex
	failStreaks map[string]int
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
		lastSuccess: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "ingest_region_last_success_timestamp_seconds",
			Help: "Unix time at which the region's latest completed pass finished."}, []string{"region"}),
		failures: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "ingest_region_consecutive_failures",
			Help: "Failed passes in a row, by region; 0 after any pass that did not fail."}, []string{"region"}),
		jobRuns: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "ingest_job_runs_total",
			Help: "Runs of the schedule's other entries (track, prune) by status."}, []string{"job", "status"}),
		failStreaks: map[string]int{},
	}
	b := readBuildInfo()
	info := prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "ingest_build_info",
		Help: "Always 1; the labels say which build is running."}, []string{"version", "revision", "goversion"})
	info.WithLabelValues(b.Version, b.Revision, b.GoVersion).Set(1)
	m.reg.MustRegister(m.spent, m.decisions, m.runs, m.duration, m.lag, m.lastSuccess, m.failures, m.jobRuns, info,
		prometheus.NewGoCollector(), prometheus.NewProcessCollector(prometheus.ProcessCollectorOpts{}))
	return m
}

// seed sets the last-success times from the database, so that a restarted
// daemon does not look as if no region ever succeeded.
func (m *metrics) seed(last map[string]store.RunSummary) {
	for code, r := range last {
		if r.Status == ingest.StatusCompleted && !r.Finished.IsZero() {
			m.lastSuccess.WithLabelValues(code).Set(float64(r.Finished.UnixMilli()) / 1000)
		}
	}
}

// observe counts a finished run of the schedule: a chart's pass by its
// chart, the other entries by name.
func (m *metrics) observe(e jobs.Entry, end jobs.Ended, took time.Duration, slot time.Time) {
	switch e.Kind {
	case jobs.KindChart, jobs.KindCategoryChart:
		m.observePass(e.Name, end.Status, took, slot)
	default:
		m.jobRuns.WithLabelValues(e.Name, string(end.Status)).Inc()
	}
}

// observePass counts a finished pass. The lag is set only for a pass its
// slot started: a catch-up at start runs for a slot no daemon was there
// for, and counting it as late would read as a schedule falling behind.
func (m *metrics) observePass(chart string, status ingest.RunStatus, took time.Duration, slot time.Time) {
	m.runs.WithLabelValues(chart, string(status)).Inc()
	m.duration.WithLabelValues(chart).Observe(took.Seconds())
	if !slot.IsZero() {
		start := time.Now().Add(-took)
		m.lag.WithLabelValues(chart).Set(max(start.Sub(slot), 0).Seconds())
	}
	if status == ingest.StatusCompleted {
		m.lastSuccess.WithLabelValues(chart).SetToCurrentTime()
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if status == ingest.StatusFailed {
		m.failStreaks[chart]++
	} else {
		m.failStreaks[chart] = 0
	}
	m.failures.WithLabelValues(chart).Set(float64(m.failStreaks[chart]))
}

// failing lists the regions whose latest failingAfter passes failed.
func (m *metrics) failing() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []string
	for code, n := range m.failStreaks {
		if n >= failingAfter {
			out = append(out, code)
		}
	}
	return out
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

// handler serves the registry plus what the limiter says at scrape time.
func (m *metrics) handler(l stateReader) http.Handler {
	reg := prometheus.NewRegistry()
	reg.MustRegister(&limiterCollector{l: l})
	return promhttp.HandlerFor(prometheus.Gatherers{m.reg, reg}, promhttp.HandlerOpts{})
}

var (
	limiterUpDesc = prometheus.NewDesc("ingest_limiter_up",
		"1 when the limiter answered this scrape, 0 when it did not (the pools' series are then absent).", []string{"backend"}, nil)
	remainingDesc = prometheus.NewDesc("ingest_quota_remaining_units",
		"Units the limiter can still admit in the trailing window, by pool.", []string{"pool"}, nil)
	usedDesc = prometheus.NewDesc("ingest_quota_used_units",
		"Units the limiter counts in the trailing window, by pool.", []string{"pool"}, nil)
	blockedDesc = prometheus.NewDesc("ingest_quota_blocked_until_timestamp_seconds",
		"Unix time until which the upstream blocked the pool; 0 when it is not blocked.", []string{"pool"}, nil)
)

// limiterCollector reads the pools at scrape time. A limiter that does not
// answer gives ingest_limiter_up 0 and no pool series: a failed source must
// not fail the whole scrape, or monitoring goes dark exactly when it is
// needed.
type limiterCollector struct{ l stateReader }

func (c *limiterCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{limiterUpDesc, remainingDesc, usedDesc, blockedDesc} {
		ch <- d
	}
}

func (c *limiterCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	pools, err := c.l.State(ctx)
	if err != nil {
		ch <- prometheus.MustNewConstMetric(limiterUpDesc, prometheus.GaugeValue, 0, c.l.Backend())
		return
	}
	ch <- prometheus.MustNewConstMetric(limiterUpDesc, prometheus.GaugeValue, 1, c.l.Backend())
	for _, p := range pools {
		ch <- prometheus.MustNewConstMetric(remainingDesc, prometheus.GaugeValue, float64(p.Remaining), p.Pool)
		ch <- prometheus.MustNewConstMetric(usedDesc, prometheus.GaugeValue, float64(p.Used), p.Pool)
		var blocked float64
		if !p.BlockedUntil.IsZero() {
			blocked = float64(p.BlockedUntil.Unix())
		}
		ch <- prometheus.MustNewConstMetric(blockedDesc, prometheus.GaugeValue, blocked, p.Pool)
	}
}

// meteredLimiter counts the decisions of the limiter it wraps.
type meteredLimiter struct {
	next jobs.Limiter
	m    *metrics
}

var _ jobs.Limiter = (*meteredLimiter)(nil)

func (l *meteredLimiter) Take(ctx context.Context, op string) (ingest.Decision, error) {
	d, err := l.next.Take(ctx, op)
	l.m.decided(op, d, err)
	return d, err
}

func (l *meteredLimiter) Block(ctx context.Context, pool string) (time.Time, error) {
	return l.next.Block(ctx, pool)
}

func (l *meteredLimiter) Refund(ctx context.Context, call ingest.Call) error {
	return l.next.Refund(ctx, call)
}

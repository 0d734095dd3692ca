// Package metrics is what `ingest run --listen` serves on /metrics, in
// Prometheus's format: the limiter's decisions and units, the passes'
// outcomes, durations and lag, and, read at scrape time, the pools' state,
// the upstream's clock skew, the charts' ages and the pacing plan.
//
// Every series is in seconds and units. A source that cannot be read (the
// limiter) becomes a series saying so, never a failed scrape: monitoring
// must not go dark exactly when it is needed.
package metrics

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/jobs"
	"github.com/ingestworks/ingest/store"
)

// FailingAfter is how many failed passes in a row make a region "failing
// repeatedly" (Failing).
const FailingAfter = 3

// Build is the build that runs, for ingest_build_info's labels.
type Build struct{ Version, Revision, GoVersion string }

// Metrics holds the series of one process.
type Metrics struct {
	clock       ingest.Clock // the house's: a slot's lag, a success's time and the backoff's end are on it
	reg         *prometheus.Registry
	spent       *prometheus.CounterVec
	decisions   *prometheus.CounterVec
	runs        *prometheus.CounterVec
	duration    *prometheus.HistogramVec
	lag         *prometheus.GaugeVec
	lastSuccess *prometheus.GaugeVec
	failures    *prometheus.GaugeVec
	jobRuns     *prometheus.CounterVec
	site        *API
	gone        prometheus.Counter
	backoff     prometheus.Gauge

	mu          sync.Mutex
	failStreaks map[string]int
	backingOff  error     // why no chart runs until backoffEnd
	backoffEnd  time.Time // zero: not backing off
}

// New registers the series, the build's info and the Go runtime's; c,
// the house clock, is required.
func New(b Build, c ingest.Clock) *Metrics {
	if c == nil {
		panic("metrics: New's clock is required: the house's clock")
	}
	m := &Metrics{
		clock: c,
		reg:   prometheus.NewRegistry(),
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
		gone: prometheus.NewCounter(prometheus.CounterOpts{Name: "ingest_videos_gone_total",
			Help: "Videos a refresh found the upstream no longer returns (deleted, made private), deleted with their rows (docs/explanation/terms.md)."}),
		backoff: prometheus.NewGauge(prometheus.GaugeOpts{Name: "ingest_upstream_backoff_until_timestamp_seconds",
			Help: "Unix time until which the daemon runs no chart, backing off an upstream that fails every chart; 0 when it is not."}),
		failStreaks: map[string]int{},
	}
	m.reg.MustRegister(m.spent, m.decisions, m.runs, m.duration, m.lag, m.lastSuccess, m.failures, m.jobRuns, m.gone, m.backoff, buildInfo(b),
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	m.site = newAPI(m.reg)
	return m
}

// Site is the series of the site run --listen serves, on the daemon's
// /metrics: the same as serve's.
func (m *Metrics) Site() *API { return m.site }

// Seed sets the last-success times from the database, so that a restarted
// daemon does not look as if no region ever succeeded.
func (m *Metrics) Seed(last map[string]store.RunSummary) {
	for code, r := range last {
		if r.Status == ingest.StatusCompleted && !r.Finished.IsZero() {
			m.lastSuccess.WithLabelValues(code).Set(float64(r.Finished.UnixMilli()) / 1000)
		}
	}
}

// Pass counts a finished pass of region. The lag is set only for a pass
// its slot started: a catch-up at start (zero slot) runs for a slot no
// daemon was there for, and counting it as late would read as a schedule
// falling behind.
func (m *Metrics) Pass(region string, status ingest.RunStatus, took time.Duration, slot time.Time) {
	m.pass(region, status, took, slot, false)
}

// pass counts a finished pass; again is a retry within its slot, whose
// failure is the slot's failure already counted (jobs.Ended.Again).
func (m *Metrics) pass(region string, status ingest.RunStatus, took time.Duration, slot time.Time, again bool) {
	m.runs.WithLabelValues(region, string(status)).Inc()
	m.duration.WithLabelValues(region).Observe(took.Seconds())
	if !slot.IsZero() {
		start := m.clock.Now().Add(-took)
		m.lag.WithLabelValues(region).Set(max(start.Sub(slot), 0).Seconds())
	}
	if status == ingest.StatusCompleted {
		m.lastSuccess.WithLabelValues(region).Set(float64(m.clock.Now().UnixNano()) / 1e9)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	switch {
	case status == ingest.StatusFailed && again:
	case status == ingest.StatusFailed:
		m.failStreaks[region]++
	default:
		m.failStreaks[region] = 0
	}
	m.failures.WithLabelValues(region).Set(float64(m.failStreaks[region]))
}

// Job counts a finished run of one of the schedule's entries that is not a
// chart (tracking, pruning).
func (m *Metrics) Job(name string, status ingest.RunStatus) {
	m.jobRuns.WithLabelValues(name, string(status)).Inc()
}

// Observe is the job Runner's Observe: a chart's pass counts as a Pass,
// every other entry as a Job.
func (m *Metrics) Observe(e jobs.Entry, end jobs.Ended, took time.Duration, slot time.Time) {
	if e.Kind == jobs.KindChart || e.Kind == jobs.KindCategoryChart {
		m.pass(e.Name, end.Status, took, slot, end.Again)
	} else {
		m.Job(e.Name, end.Status)
	}
	m.gone.Add(float64(end.Gone))
}

// Backoff is the job Runner's Backoff: the daemon runs no chart until
// until (zero: it runs them again), for cause.
func (m *Metrics) Backoff(until time.Time, inARow int, cause error) {
	m.backoff.Set(unixOrZero(until))
	m.mu.Lock()
	defer m.mu.Unlock()
	m.backoffEnd, m.backingOff = until, nil
	if !until.IsZero() {
		m.backingOff = fmt.Errorf("backing off %s that fails every chart (%d passes in a row) until %s: %v",
			ingest.Blamed(cause), inARow, until.UTC().Format(time.RFC3339), cause)
	}
}

// NoneFailing is /readyz's probe of the regions: an error saying the daemon
// is backing off a failing upstream, or naming the regions that failed
// FailingAfter passes in a row; nil when neither.
func (m *Metrics) NoneFailing(context.Context) error {
	m.mu.Lock()
	backingOff := m.backingOff
	if m.clock.Now().After(m.backoffEnd) {
		backingOff = nil
	}
	m.mu.Unlock()
	if backingOff != nil {
		return backingOff
	}
	if f := m.Failing(); len(f) > 0 {
		sort.Strings(f)
		return fmt.Errorf("failed %d passes in a row: %s", FailingAfter, strings.Join(f, ", "))
	}
	return nil
}

// Failing lists the regions whose latest FailingAfter passes failed.
func (m *Metrics) Failing() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []string
	for code, n := range m.failStreaks {
		if n >= FailingAfter {
			out = append(out, code)
		}
	}
	return out
}

// Decided counts one decision of the limiter, and the units it admitted.
func (m *Metrics) Decided(op string, d ingest.Decision, err error) {
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

// WatchClock serves ingest_clock_skew_seconds: what skew says at scrape
// time, the upstream's clock minus this host's at its last reading (NaN
// before the first, !ok).
func (m *Metrics) WatchClock(skew func(context.Context) (d time.Duration, ok bool, err error)) {
	m.reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "ingest_clock_skew_seconds",
		Help: "The upstream's clock (its Date header) minus this host's at the last response, whole seconds; NaN before the first."},
		func() float64 {
			ctx, cancel := context.WithTimeout(context.Background(), time.Second)
			defer cancel()
			d, ok, err := skew(ctx)
			if err != nil || !ok {
				return math.NaN()
			}
			return d.Round(time.Second).Seconds()
		}))
}

// Handler serves the series plus what the limiter says at scrape time.
func (m *Metrics) Handler(l StateReader) http.Handler {
	reg := prometheus.NewRegistry()
	reg.MustRegister(&limiterCollector{l: l})
	return promhttp.HandlerFor(prometheus.Gatherers{m.reg, reg}, promhttp.HandlerOpts{})
}

package metrics

import (
	"net/http"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/ingestworks/ingest"
)

// Start is /metrics while run --listen starts, from the moment its port
// opens until the daemon's own series are served: the process's series,
// the build's, and the start's own, which step it waits on and since when.
// Prometheus scrapes a target whether or not it is ready, and a scrape
// that is not 200 drops every series of the target: a start that hangs on
// the upstream is then seen as what it is, not as a target down.
type Start struct {
	clock ingest.Clock
	reg   *prometheus.Registry

	mu    sync.Mutex
	began time.Time
	step  string
	since time.Time
}

// NewStart are the series of a start beginning now, on c, at its first
// step.
func NewStart(b Build, c ingest.Clock, step string) *Start {
	now := c.Now()
	s := &Start{clock: c, began: now, reg: prometheus.NewRegistry(), step: step, since: now}
	s.reg.MustRegister(buildInfo(b), collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "ingest_start_seconds",
			Help: "Seconds since the daemon's start began, while it starts (the series goes once it serves its own)."},
			func() float64 { return s.clock.Now().Sub(s.beganAt()).Seconds() }),
		&startStep{s})
	return s
}

// Step says the start waits on step from now on.
func (s *Start) Step(step string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.step, s.since = step, s.clock.Now()
}

// Again says a start begins anew now, at step: a daemon that plans again
// on a region catalogue it read late.
func (s *Start) Again(step string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.clock.Now()
	s.began, s.step, s.since = now, step, now
}

// Doing is the step the start waits on.
func (s *Start) Doing() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.step
}

// beganAt is when the start began.
func (s *Start) beganAt() time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.began
}

// Handler serves the start's series.
func (s *Start) Handler() http.Handler { return promhttp.HandlerFor(s.reg, promhttp.HandlerOpts{}) }

var startStepDesc = prometheus.NewDesc("ingest_start_step_seconds",
	"Seconds the daemon's start has waited on its current step, named by step.", []string{"step"}, nil)

// startStep is the step the start waits on, read at scrape time.
type startStep struct{ s *Start }

func (c *startStep) Describe(ch chan<- *prometheus.Desc) { ch <- startStepDesc }

func (c *startStep) Collect(ch chan<- prometheus.Metric) {
	c.s.mu.Lock()
	step, since := c.s.step, c.s.since
	c.s.mu.Unlock()
	ch <- prometheus.MustNewConstMetric(startStepDesc, prometheus.GaugeValue, c.s.clock.Now().Sub(since).Seconds(), step)
}

// buildInfo is ingest_build_info for b.
func buildInfo(b Build) prometheus.Collector {
	info := prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "ingest_build_info",
		Help: "Always 1; the labels say which build is running."}, []string{"version", "revision", "goversion"})
	info.WithLabelValues(b.Version, b.Revision, b.GoVersion).Set(1)
	return info
}

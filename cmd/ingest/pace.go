package main

import (
	"math"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/robfig/cron/v3"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/jobs"
	"github.com/ingestworks/ingest/metrics"
	"github.com/ingestworks/ingest/pace"
	"github.com/ingestworks/ingest/store"
)

// watchPace puts the daemon's charts under a pacer (run --pace, the
// default) and serves each chart's age and the plan on /metrics. Each
// chart keeps its staggered slots at --every; the pacer's schedule fires
// only at the slots its planned cadence needs, so a schedule that fits the
// day runs exactly as without it, and one that does not is spread over the
// day instead of spending the pool by morning. Tracking and pruning keep
// their own slots.
func watchPace(s *settings, f *runFlags, p *pipeline, d *jobs.Daemon, m *metrics.Metrics, last map[string]store.RunSummary) {
	ages := &chartAges{fetched: map[string]time.Time{}}
	for chart, r := range last {
		if r.Status == ingest.StatusCompleted {
			ages.fetched[chart] = r.Started
		}
	}
	col := &paceCollector{ages: ages}
	observe := d.Runner.Observe
	var pc *pace.Pacer
	if f.pace {
		pc = newPacer(s, f.every, p, d)
		d.ScheduleFor = func(e jobs.Entry) cron.Schedule { return pc.Schedule(e.Name, e.Slots) }
		col.pc = pc
	}
	d.Runner.Observe = func(e jobs.Entry, end jobs.Ended, took time.Duration, slot time.Time) {
		if observe != nil {
			observe(e, end, took, slot)
		}
		if end.Pass == nil {
			return
		}
		if end.Status == ingest.StatusCompleted {
			ages.set(e.Name, time.Now().Add(-took))
		}
		if pc != nil {
			pc.Ran(e.Name, end.Pass.Units, end.Status)
		}
	}
	m.Register(col)
}

// newPacer plans the daemon's charts at their kind's priority (a region's
// own chart first, its category charts a level below), each never more
// often than every. Until a chart's passes are measured, a pass is
// guessed at a chart of 200 (four pages).
func newPacer(s *settings, every time.Duration, p *pipeline, d *jobs.Daemon) *pace.Pacer {
	guess := map[string]float64{}
	if charges, err := s.costs.Op(ingest.OpVideosList); err == nil {
		for _, c := range charges {
			guess[c.Pool] = float64(4 * c.Units)
		}
	}
	var entries []pace.Entry
	for _, pass := range d.Runner.Passes {
		e := pass.Entry()
		entries = append(entries, pace.Entry{Name: e.Name, Priority: int(e.Kind), Floor: every, Cost: guess})
	}
	pc := pace.New(s.costs.Pools, p.limiter.State, entries)
	pc.Measure, pc.Logger, pc.Refresh = p.db.PassCosts, s.logger, every
	s.logger.Info("pacing: each chart's cadence follows the pools' budgets until their reset, never faster than --every", "every", every)
	return pc
}

// overNote ends the warning of a schedule that cannot fit the quota: what
// the daemon does about it.
func overNote(f *runFlags) string {
	if f.pace && !f.once {
		return " (pacing spreads the charts over the upstream's day instead, each at most every --every; --strict refuses to start)"
	}
	return " (the limiter will stop passes when the quota runs out; --strict refuses to start)"
}

// chartAges is when each chart's latest completed pass started: the age
// of what the site shows for it.
type chartAges struct {
	mu      sync.Mutex
	fetched map[string]time.Time
}

func (a *chartAges) set(chart string, at time.Time) {
	a.mu.Lock()
	a.fetched[chart] = at
	a.mu.Unlock()
}

var (
	chartAgeDesc = prometheus.NewDesc("ingest_chart_age_seconds",
		"Seconds since the chart's latest completed pass started: how old what the site shows of it is.", []string{"chart"}, nil)
	cadenceDesc = prometheus.NewDesc("ingest_pace_cadence_seconds",
		"The chart's planned cadence (run --pace); +Inf when its pools have nothing left before the reset.", []string{"chart"}, nil)
	projectedDesc = prometheus.NewDesc("ingest_pace_projected_units",
		"Units the plan spends in the pool by its reset.", []string{"pool"}, nil)
	runsOutDesc = prometheus.NewDesc("ingest_pace_fixed_runs_out_timestamp_seconds",
		"Unix time at which the fixed cadence (every chart at --every) would empty the pool at the current rate; 0 when it lasts to the reset.", []string{"pool"}, nil)
)

// paceCollector serves the charts' ages and, when pacing, the plan.
type paceCollector struct {
	ages *chartAges
	pc   *pace.Pacer // nil: not pacing
}

func (c *paceCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{chartAgeDesc, cadenceDesc, projectedDesc, runsOutDesc} {
		ch <- d
	}
}

func (c *paceCollector) Collect(ch chan<- prometheus.Metric) {
	now := time.Now()
	c.ages.mu.Lock()
	for chart, at := range c.ages.fetched {
		ch <- prometheus.MustNewConstMetric(chartAgeDesc, prometheus.GaugeValue, now.Sub(at).Seconds(), chart)
	}
	c.ages.mu.Unlock()
	if c.pc == nil {
		return
	}
	st := c.pc.Status()
	for _, e := range st.Entries {
		ch <- prometheus.MustNewConstMetric(cadenceDesc, prometheus.GaugeValue, cadenceSeconds(e.Every), e.Name)
	}
	for _, p := range st.Pools {
		ch <- prometheus.MustNewConstMetric(projectedDesc, prometheus.GaugeValue, p.Spend, p.Pool)
		var out float64
		if !p.RunsOut.IsZero() {
			out = float64(p.RunsOut.Unix())
		}
		ch <- prometheus.MustNewConstMetric(runsOutDesc, prometheus.GaugeValue, out, p.Pool)
	}
}

func cadenceSeconds(d time.Duration) float64 {
	if d == pace.Never {
		return math.Inf(1)
	}
	return d.Seconds()
}

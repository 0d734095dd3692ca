package metrics

import (
	"maps"
	"math"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/clock"
	"github.com/ingestworks/ingest/jobs"
	"github.com/ingestworks/ingest/pace"
	"github.com/ingestworks/ingest/store"
)

// Ages is when each chart's latest completed pass started: the age of
// what the site shows of it. Its methods are safe for concurrent use.
type Ages struct {
	mu      sync.Mutex
	fetched map[string]time.Time
}

// NewAges starts from the charts' latest runs in the store.
func NewAges(last map[string]store.RunSummary) *Ages {
	a := &Ages{fetched: map[string]time.Time{}}
	for chart, r := range last {
		if r.Status == ingest.StatusCompleted {
			a.fetched[chart] = r.Started
		}
	}
	return a
}

// Set records a completed pass of the chart that started at.
func (a *Ages) Set(chart string, at time.Time) {
	a.mu.Lock()
	a.fetched[chart] = at
	a.mu.Unlock()
}

// Keep is observe, after which a chart pass that completed sets its
// chart's age, started took before now.
func (a *Ages) Keep(observe func(jobs.Entry, jobs.Ended, time.Duration, time.Time), now func() time.Time) func(jobs.Entry, jobs.Ended, time.Duration, time.Time) {
	return func(e jobs.Entry, end jobs.Ended, took time.Duration, slot time.Time) {
		if observe != nil {
			observe(e, end, took, slot)
		}
		if end.Pass != nil && end.Status == ingest.StatusCompleted {
			a.Set(e.Name, now().Add(-took))
		}
	}
}

var (
	chartAgeDesc = prometheus.NewDesc("ingest_chart_age_seconds",
		"Seconds since the chart's latest completed pass started: how old what the site shows of it is.", []string{"chart"}, nil)
	chartCadenceDesc = prometheus.NewDesc("ingest_chart_cadence_seconds",
		"The cadence the daemon plans for the chart: the pace's under run --pace, else --every; +Inf when the plan drops it. A chart older than it and one slot (ingest_chart_slot_seconds) is late.", []string{"chart"}, nil)
	chartSlotDesc = prometheus.NewDesc("ingest_chart_slot_seconds",
		"The period of the chart's slots (its tier's --every): a pass planned at a slot that did not complete by the next one leaves the chart older than its cadence and one slot.", []string{"chart"}, nil)
	cadenceDesc = prometheus.NewDesc("ingest_pace_cadence_seconds",
		"The planned cadence of a chart, or of tracking (chart=\"track\"), under run --pace; +Inf when it is dropped or its pools have no room.", []string{"chart"}, nil)
	projectedDesc = prometheus.NewDesc("ingest_pace_projected_units",
		"Units the plan spends in the pool by its reset.", []string{"pool"}, nil)
	droppedDesc = prometheus.NewDesc("ingest_pace_dropped",
		"1 when the plan drops the entry (a chart, or tracking under chart=\"track\"): the pool cannot hold it beside the entries above it; 0 otherwise.", []string{"chart"}, nil)
	shareDesc = prometheus.NewDesc("ingest_pace_share",
		"The part of the pool this worker counts on: 1/N, N this worker and each worker of another database the limiter saw spend in the pool's window (the log says when N changes).", []string{"pool"}, nil)
	declinedDesc = prometheus.NewDesc("ingest_pace_declined_slots_total",
		"Slots the pacer declined the entry at since the daemon started, by reason: \"caught up\" (the catch-up at start ran the slot's pass), \"not earned\" (a cadence longer than its slots), \"no room\", \"spread\". A declined slot is planned, never missed.", []string{"chart", "reason"}, nil)
	runsOutDesc = prometheus.NewDesc("ingest_pace_fixed_runs_out_timestamp_seconds",
		"Unix time at which the fixed cadence (every entry at its floor) would empty the pool at the current rate; 0 when it lasts to the reset.", []string{"pool"}, nil)
)

// Pace is the collector of the charts' ages and planned cadences and,
// when Status is set (the daemon paces), the plan, read at scrape time.
type Pace struct {
	Ages *Ages
	// Floors are the daemon's charts, each planned at its floor (its
	// tier's period) unless the pacer's plan (Status) says otherwise.
	Floors map[string]time.Duration
	Status func() pace.Status // nil: not pacing
	Clock  clock.Clock        // the house's; required
}

// Describe implements prometheus.Collector.
func (c *Pace) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{chartAgeDesc, chartCadenceDesc, chartSlotDesc, cadenceDesc, droppedDesc, projectedDesc, shareDesc, runsOutDesc, declinedDesc} {
		ch <- d
	}
}

// Collect implements prometheus.Collector.
func (c *Pace) Collect(ch chan<- prometheus.Metric) {
	now := c.Clock.Now()
	c.Ages.mu.Lock()
	for chart, at := range c.Ages.fetched {
		ch <- prometheus.MustNewConstMetric(chartAgeDesc, prometheus.GaugeValue, now.Sub(at).Seconds(), chart)
	}
	c.Ages.mu.Unlock()
	for chart, every := range c.Floors {
		ch <- prometheus.MustNewConstMetric(chartSlotDesc, prometheus.GaugeValue, every.Seconds(), chart)
	}
	planned := maps.Clone(c.Floors)
	if planned == nil {
		planned = map[string]time.Duration{}
	}
	var st pace.Status
	if c.Status != nil {
		st = c.Status()
	}
	for _, e := range st.Entries {
		if _, ok := planned[e.Name]; ok {
			planned[e.Name] = e.Every
		}
	}
	for chart, every := range planned {
		ch <- prometheus.MustNewConstMetric(chartCadenceDesc, prometheus.GaugeValue, cadenceSeconds(every), chart)
	}
	if c.Status == nil {
		return
	}
	for _, e := range st.Entries {
		ch <- prometheus.MustNewConstMetric(cadenceDesc, prometheus.GaugeValue, cadenceSeconds(e.Every), e.Name)
		dropped := 0.0
		if e.Dropped {
			dropped = 1
		}
		ch <- prometheus.MustNewConstMetric(droppedDesc, prometheus.GaugeValue, dropped, e.Name)
		for why, n := range e.Declined {
			ch <- prometheus.MustNewConstMetric(declinedDesc, prometheus.CounterValue, float64(n), e.Name, string(why))
		}
	}
	for _, p := range st.Pools {
		ch <- prometheus.MustNewConstMetric(projectedDesc, prometheus.GaugeValue, p.Spend, p.Pool)
		ch <- prometheus.MustNewConstMetric(shareDesc, prometheus.GaugeValue, p.Share, p.Pool)
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

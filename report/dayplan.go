package report

// The day's plan of a run: what its schedule spends in a day in each pool
// against what the pool allows, printed at start and checked (--strict).

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/jobs"
	"github.com/ingestworks/ingest/regions"
	"github.com/ingestworks/ingest/store"
)

// DayPlan is a run's plan of the day, made once: the charts it was made
// for, its lines and its tiers, and the warning of a schedule that does
// not fit the day.
type DayPlan struct {
	charts []regions.Chart
	lines  []PlanLine
	tiers  []TierLine
	warn   string
}

// Say logs the plan and its tiers, one line each, then its warning.
func (d *DayPlan) Say(log *slog.Logger) {
	if d == nil {
		return
	}
	LogPlan(log, d.lines)
	LogTiers(log, d.tiers)
	if d.warn != "" {
		log.Warn(d.warn)
	}
}

// Lines is the plan's lines; nil when no plan was made.
func (d *DayPlan) Lines() []PlanLine {
	if d == nil {
		return nil
	}
	return d.lines
}

// Charts is the charts the plan was made for; nil when no plan was made.
func (d *DayPlan) Charts() []regions.Chart {
	if d == nil {
		return nil
	}
	return d.charts
}

// For is the plan of charts: d when it was made for them, else the one
// remake makes (a catalogue read since selected other charts).
func (d *DayPlan) For(charts []regions.Chart, remake func() (*DayPlan, error)) (*DayPlan, error) {
	if slices.Equal(d.Charts(), charts) {
		return d, nil
	}
	return remake()
}

// PlanRun is what of a run its day's plan is made from.
type PlanRun struct {
	Timetable jobs.Timetable
	// Track is how long tracking follows a charted video (zero: off),
	// TrackEvery how often, TrackBudget its stats units a day.
	Track, TrackEvery time.Duration
	TrackBudget       int64
	// Strict refuses a schedule that does not fit the day; Paced says
	// a daemon's pacer spreads it instead.
	Strict, Paced bool
}

// PlanReads is what a day's plan reads of the database: its charts' last
// runs and the videos they held.
type PlanReads interface {
	LastRuns(ctx context.Context, kind ingest.PageKind) (map[string]store.RunSummary, error)
	ChartedSince(ctx context.Context, since time.Time) ([]ingest.Charted, error)
}

// MakeDayPlan makes r's plan at now: the charts at their tiers' cadences,
// each region's categories once a day, and tracking of the videos the
// charts held over its span (before they hold any, the charts' own). db
// is nil when there is none yet. A schedule the pools cannot hold at all
// is a ConfigError; one that does not fit the day is a warning, or with
// r.Strict a ConfigError. The plan is returned with the error, to be said
// with the refusal.
func MakeDayPlan(ctx context.Context, c *ingest.Costs, db PlanReads, now time.Time, r PlanRun) (*DayPlan, error) {
	sched := Schedule{Timetable: r.Timetable, Tracked: -1}
	if r.Track > 0 {
		sched.TrackEvery, sched.TrackBatch = r.TrackEvery, jobs.TrackBatch
	}
	var last map[string]store.RunSummary
	if db != nil {
		var err error
		if last, err = db.LastRuns(ctx, ingest.Trending); err != nil {
			return nil, fmt.Errorf("plan: read last runs: %w", err)
		}
		charted, err := db.ChartedSince(ctx, now.Add(-r.Track))
		if r.Track > 0 && err == nil && len(charted) > 0 {
			sched.Tracked = r.Timetable.Cadence(r.TrackEvery, r.TrackBudget, c).PerRun(charted)
		}
	}
	sched.Last = last // the tiers' costs are the plan's
	d := &DayPlan{charts: slices.Clone(r.Timetable.Charts), lines: Plan(c, sched, last), tiers: Tiers(c, sched)}
	if unheld := Unheld(c, sched); len(unheld) > 0 {
		return d, &ingest.ConfigError{Err: fmt.Errorf("--regions: the pools cannot hold the schedule at all (%s); lengthen --max-stale, drop regions, or raise the pool's limit in --costs",
			strings.Join(unheld, "; "))}
	}
	over := Overruns(d.lines)
	if len(over) == 0 {
		return d, nil
	}
	msg := fmt.Sprintf("the schedule (--every %s, %d charts) cannot fit the quota: %s; lengthen --every or drop regions or categories",
		r.Timetable.Every, len(r.Timetable.Charts)*max(len(r.Timetable.Categories), 1), strings.Join(over, "; "))
	if r.Strict {
		return d, &ingest.ConfigError{Err: fmt.Errorf("--strict: %s", msg)}
	}
	d.warn = msg + overNote(r)
	return d, nil
}

// overNote ends the warning of a schedule that cannot fit the quota: what
// the daemon does about it.
func overNote(r PlanRun) string {
	if r.Paced {
		return " (pacing spreads the charts over the upstream's day instead, each at most every --every; --strict refuses to start)"
	}
	return " (the limiter will stop passes when the quota runs out; --strict refuses to start)"
}

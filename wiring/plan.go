package wiring

// The day's plan of a run: what its schedule spends in a day in each pool
// against what the pool allows, printed at start, checked (--strict), and
// recorded with the schedule with the costs the run spends by, so that
// report, /quota, /api/v1/quota and the operator's page show this one
// plan, tracking's units among them, rather than one of their own.

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/clock"
	"github.com/ingestworks/ingest/costs"
	"github.com/ingestworks/ingest/jobs"
	"github.com/ingestworks/ingest/ledger"
	"github.com/ingestworks/ingest/pace"
	"github.com/ingestworks/ingest/regions"
	"github.com/ingestworks/ingest/report"
	"github.com/ingestworks/ingest/store"
)

// Prepare reads r's --regions once, against the region catalogue db
// keeps (the built-in copy before it keeps one; db is nil when there is
// no database yet), and makes the day's plan when r asks for one
// (Run.Plan), before anything is written: a selection or a plan it
// refuses (--strict) leaves nothing behind. Run records the plan with the
// schedule. With --regions all the plan is said once the catalogue is
// read (runOn), made again only if that catalogue selects other charts.
func (h *Host) Prepare(ctx context.Context, db *Database, r *Run) error {
	var err error
	if r.Timetable.Charts, err = r.Regions.Of(jobs.StoredCatalogue(ctx, catalogueStore(db))); err != nil {
		return configErrorf("--regions: %w", err)
	}
	if !r.Plan {
		return nil
	}
	r.planned, err = h.dayPlan(ctx, db, *r)
	if err != nil || !r.Regions.All() {
		r.planned.say(h.Logger)
	}
	return err
}

// dayPlan is a run's plan of the day, made once: the charts it was made
// for, its lines and its tiers, and the warning of a schedule that does
// not fit the day.
type dayPlan struct {
	charts []regions.Chart
	lines  []report.PlanLine
	tiers  []report.TierLine
	warn   string
}

// say logs the plan and its tiers, one line each, then its warning.
func (d *dayPlan) say(log *slog.Logger) {
	if d == nil {
		return
	}
	report.LogPlan(log, d.lines)
	report.LogTiers(log, d.tiers)
	if d.warn != "" {
		log.Warn(d.warn)
	}
}

// Lines is the plan's lines; nil when no plan was made.
func (d *dayPlan) Lines() []report.PlanLine {
	if d == nil {
		return nil
	}
	return d.lines
}

// dayPlan makes r's plan: the charts at their tiers' cadences, each
// region's categories once a day, and tracking of the videos the charts
// held over its span (before they hold any, the charts' own). db is nil
// when there is none yet. A schedule the pools cannot hold at all is a
// ConfigError; one that does not fit the day is a warning, or with
// r.Strict a ConfigError. The plan is returned with the error, to be
// said with the refusal.
func (h *Host) dayPlan(ctx context.Context, db *Database, r Run) (*dayPlan, error) {
	sched := report.Schedule{Timetable: r.Timetable, Tracked: -1}
	if r.Track > 0 {
		sched.TrackEvery, sched.TrackBatch = r.TrackEvery, jobs.TrackBatch
	}
	var last map[string]store.RunSummary
	if db != nil {
		var err error
		if last, err = db.LastRuns(ctx, ingest.Trending); err != nil {
			return nil, fmt.Errorf("plan: read last runs: %w", err)
		}
		charted, err := db.ChartedSince(ctx, h.now().Add(-r.Track))
		if r.Track > 0 && err == nil && len(charted) > 0 {
			sched.Tracked = r.Timetable.Cadence(r.TrackEvery, r.TrackBudget, h.Costs).PerRun(charted)
		}
	}
	sched.Last = last // the tiers' costs are the plan's
	d := &dayPlan{charts: slices.Clone(r.Timetable.Charts), lines: report.Plan(h.Costs, sched, last), tiers: report.Tiers(h.Costs, sched)}
	if unheld := report.Unheld(h.Costs, sched); len(unheld) > 0 {
		return d, &ConfigError{Err: fmt.Errorf("--regions: the pools cannot hold the schedule at all (%s); lengthen --max-stale, drop regions, or raise the pool's limit in --costs",
			strings.Join(unheld, "; "))}
	}
	over := report.Overruns(d.lines)
	if len(over) == 0 {
		return d, nil
	}
	msg := fmt.Sprintf("the schedule (--every %s, %d charts) cannot fit the quota: %s; lengthen --every or drop regions or categories",
		r.Timetable.Every, len(r.Timetable.Charts)*max(len(r.Timetable.Categories), 1), strings.Join(over, "; "))
	if r.Strict {
		return d, &ConfigError{Err: fmt.Errorf("--strict: %s", msg)}
	}
	d.warn = msg + overNote(r)
	return d, nil
}

// overNote ends the warning of a schedule that cannot fit the quota: what
// the daemon does about it.
func overNote(r Run) string {
	if r.Pace && !r.Once {
		return " (pacing spreads the charts over the upstream's day instead, each at most every --every; --strict refuses to start)"
	}
	return " (the limiter will stop passes when the quota runs out; --strict refuses to start)"
}

// record keeps the timetable the run follows in the database, whole, with
// its day's plan (nil when it made none) and the costs it spends by, for
// every view of its plan (report, serve, /quota, the API, the dashboard).
func (h *Host) record(ctx context.Context, p *Pipeline, t jobs.Timetable, plan []report.PlanLine) error {
	doc, err := json.Marshal(t)
	if err != nil {
		return fmt.Errorf("record the schedule: %w", err)
	}
	var planDoc []byte
	if plan != nil {
		if planDoc, err = json.Marshal(plan); err != nil {
			return fmt.Errorf("record the plan: %w", err)
		}
	}
	return p.DB.Ledger.SaveSchedule(ctx, ledger.Schedule{Every: t.Every, Regions: t.Names(), Timetable: doc,
		Plan: planDoc, Costs: costs.Canonical(h.Costs), Updated: h.now()})
}

// Planner is the plan a pacing worker would follow now for src's
// timetable (report.Planner): the pacer as the daemon builds it, from the
// pools' states and src's ledger and runs, logging nothing (the daemon
// logs its own).
func Planner(ctx context.Context, src report.Sources, now time.Time, state func(context.Context) ([]ingest.PoolState, error)) (pace.Status, error) {
	t := src.Timetable
	charts, err := t.Entries()
	if err != nil {
		return pace.Status{}, err
	}
	pc, err := newPacer(src.Costs, src.DB, src.QuotaKey, pace.Config{State: state, Entries: jobs.PaceEntries(charts, src.Costs),
		Daily: jobs.DailyCost(src.Costs, t.Names()),
		Clock: clock.Func(func() time.Time { return now }), Logger: slog.New(slog.DiscardHandler), Bound: t.MaxStale})
	if err != nil {
		return pace.Status{}, err
	}
	// Twice: a daemon counts spend beyond its ledger as another worker's
	// once its next plan still sees it (it may be its own calls in
	// flight); a reader, with none of its own, confirms it at once.
	st, err := pc.Plan(ctx)
	if err == nil {
		st, err = pc.Plan(ctx)
	}
	return st, err
}

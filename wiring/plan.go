package wiring

// The day's plan of a run: what its schedule spends in a day in each pool
// against what the pool allows, printed at start, checked (--strict), and
// recorded with the schedule with the costs the run spends by, so that
// report, /quota, /api/v1/quota and the operator's page show this one
// plan, tracking's units among them, rather than one of their own.

import (
	"context"

	"github.com/ingestworks/ingest/jobs"
	"github.com/ingestworks/ingest/report"
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
		return err // a ConfigError naming --regions
	}
	if !r.Plan {
		return nil
	}
	r.planned, err = h.dayPlan(ctx, db, *r)
	if err != nil || !r.Regions.All() {
		r.planned.Say(h.Logger)
	}
	return err
}

// dayPlan makes r's day's plan on db (nil: none yet) with the host's
// costs and clock (report.MakeDayPlan).
func (h *Host) dayPlan(ctx context.Context, db *Database, r Run) (*report.DayPlan, error) {
	var reads report.PlanReads
	if db != nil {
		reads = db
	}
	return report.MakeDayPlan(ctx, h.Costs, reads, h.now(), report.PlanRun{Timetable: r.Timetable, Track: r.Track,
		TrackEvery: r.TrackEvery, TrackBudget: r.TrackBudget, Strict: r.Strict, Paced: r.Pace && !r.Once})
}

// record keeps the timetable the run follows in the database with its
// day's plan (nil when it made none) and the costs it spends by
// (report.Record).
func (h *Host) record(ctx context.Context, p *Pipeline, t jobs.Timetable, plan []report.PlanLine) error {
	return report.Record(ctx, p.DB.Ledger, t, plan, h.Costs, h.now())
}

package report

// Which schedule a report follows: the one a daemon or a cron run
// recorded, the flags' where given.

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/costs"
	"github.com/ingestworks/ingest/jobs"
	"github.com/ingestworks/ingest/ledger"
	"github.com/ingestworks/ingest/regions"
	"github.com/ingestworks/ingest/store"
)

// FlagsSchedule is what the report's next runs and plan follow: the
// timetable a daemon or a cron run recorded on the database, the flags'
// regions and period in place of its own where given (--regions,
// --every); with no record, the flags' timetable.
type FlagsSchedule struct {
	// Timetable is the flags' (the default regions and --every's default
	// where not given).
	Timetable                jobs.Timetable
	RegionsGiven, EveryGiven bool
	// Regions is --regions as given: when it names all, the flags'
	// regions are the catalogue's the database keeps.
	Regions regions.Selection
}

// FollowReads is what following a schedule reads of the database: the
// schedule recorded, and the charts it holds runs of.
type FollowReads interface {
	Schedule(ctx context.Context) (ledger.Schedule, bool, error)
	LastRuns(ctx context.Context, kind ingest.PageKind) (map[string]store.RunSummary, error)
}

// Follow sets src's timetable: the one recorded in db, the flags' regions
// and period in place of its own where given; without one, the flags'
// regions where given, else the charts db holds runs of, the default
// regions only when it holds none; with no database (nil), the flags'.
// --regions is read once, against cat, the catalogue db keeps, which
// names each region.
func (sch FlagsSchedule) Follow(ctx context.Context, cat regions.Catalogue, db FollowReads, src *Sources) error {
	src.Names = jobs.RegionNames(cat)
	flags := sch.Timetable
	charts, err := sch.Regions.Of(cat)
	if err != nil {
		return err
	}
	flags.Charts = charts
	src.Timetable = flags
	if db == nil { // no database yet: the flags' schedule, by the built-in catalogue
		return nil
	}
	rec, ok, err := db.Schedule(ctx)
	switch {
	case err != nil:
		return err
	case ok:
		t := Recorded(rec)
		if sch.RegionsGiven {
			t.Charts, t.Categories = flags.Charts, flags.Categories
		}
		if sch.EveryGiven {
			t.Every = flags.Every
		} else {
			src.ScheduleFrom = "the daemon's"
		}
		src.Timetable = t
		recordedCosts(rec, src)
		if !sch.RegionsGiven && !sch.EveryGiven {
			src.Plan = recordedPlan(rec)
		}
	case !sch.RegionsGiven:
		return heldCharts(ctx, db, src)
	}
	return nil
}

// ScheduleSaver is where a run records the schedule it follows: the
// ledger's.
type ScheduleSaver interface {
	SaveSchedule(ctx context.Context, s ledger.Schedule) error
}

// Record keeps the timetable t a run follows in the database, whole, with
// its day's plan (nil when it made none) and the costs c it spends by, at
// now: what Follow reads for every view of its plan (report, serve,
// /quota, the API, the dashboard).
func Record(ctx context.Context, db ScheduleSaver, t jobs.Timetable, plan []PlanLine, c *ingest.Costs, now time.Time) error {
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
	return db.SaveSchedule(ctx, ledger.Schedule{Every: t.Every, Regions: t.Names(), Timetable: doc,
		Plan: planDoc, Costs: costs.Canonical(c), Updated: now})
}

// recordedCosts puts the costs the schedule's run spends by in src in
// place of the command's, saying so when they differ: the pools and the
// plan are then the run's, one number for one fact.
func recordedCosts(rec ledger.Schedule, src *Sources) {
	if len(rec.Costs) == 0 {
		return
	}
	theirs, err := costs.Parse("the schedule's recorded costs", rec.Costs)
	if err != nil || costs.Hash(theirs) == costs.Hash(src.Costs) {
		return
	}
	src.CostsNote = fmt.Sprintf("this command's costs (%s) are not the ones the schedule's run spends by (%s): the pools and the plan shown are the run's; give --costs the run's file to silence this",
		costs.Hash(src.Costs), costs.Hash(theirs))
	src.Costs = theirs
}

// recordedPlan is the day's plan the schedule's run recorded; nil when it
// recorded none, or one this version cannot read: the report then makes
// it from the timetable.
func recordedPlan(rec ledger.Schedule) []PlanLine {
	var plan []PlanLine
	if len(rec.Plan) == 0 || json.Unmarshal(rec.Plan, &plan) != nil {
		return nil
	}
	return plan
}

// heldCharts makes src's schedule the charts db holds runs of, by name,
// when it holds any: a database that ran only some regions reports those,
// not the default ones.
func heldCharts(ctx context.Context, db FollowReads, src *Sources) error {
	last, err := db.LastRuns(ctx, ingest.Trending)
	if err != nil || len(last) == 0 {
		return err
	}
	src.Timetable = jobs.NamedTimetable(src.Timetable.Every, slices.Sorted(maps.Keys(last)))
	return nil
}

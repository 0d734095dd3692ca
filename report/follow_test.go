package report_test

import (
	"context"
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/costs"
	"github.com/ingestworks/ingest/internal/rig/storetest"
	"github.com/ingestworks/ingest/jobs"
	"github.com/ingestworks/ingest/ledger"
	"github.com/ingestworks/ingest/regions"
	"github.com/ingestworks/ingest/report"
	"github.com/ingestworks/ingest/store"
)

// A report follows the daemon's recorded schedule for what the flags do
// not give, and the flags for what they do.
func TestScheduleFollowsTheDaemon(t *testing.T) {
	ctx := context.Background()
	db := storetest.Open(t)
	reads := struct {
		*store.DB
		*ledger.Ledger
	}{db, ledger.New(db)}
	flags := report.FlagsSchedule{Timetable: jobs.NamedTimetable(time.Hour, []string{"US"}), Regions: "US"}
	src := report.Sources{Timetable: flags.Timetable, ScheduleFrom: "--every"}
	if err := flags.Follow(ctx, regions.Builtin, reads, &src); err != nil || src.Timetable.Every != time.Hour || src.ScheduleFrom != "--every" {
		t.Fatalf("nothing recorded: got every %s from %q (%v), want the flags'", src.Timetable.Every, src.ScheduleFrom, err)
	}
	recorded := jobs.Timetable{Charts: []regions.Chart{{Code: "GB", Tier: 3, Depth: 50}}, Categories: []string{"", "10"},
		Every: 2 * time.Hour, MaxStale: 9 * time.Hour}
	doc, err := json.Marshal(recorded)
	if err != nil {
		t.Fatal(err)
	}
	if err := ledger.New(db).SaveSchedule(ctx, ledger.Schedule{Every: recorded.Every, Regions: recorded.Names(), Timetable: doc,
		Updated: time.Now()}); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name  string
		given report.FlagsSchedule
		from  string
		want  jobs.Timetable
	}{
		{"none given", flags, "the daemon's", recorded},
		{"every given", report.FlagsSchedule{Timetable: flags.Timetable, Regions: flags.Regions, EveryGiven: true}, "--every",
			jobs.Timetable{Charts: recorded.Charts, Categories: recorded.Categories, Every: time.Hour, MaxStale: recorded.MaxStale}},
		{"regions given", report.FlagsSchedule{Timetable: flags.Timetable, Regions: flags.Regions, RegionsGiven: true}, "the daemon's",
			jobs.Timetable{Charts: flags.Timetable.Charts, Categories: flags.Timetable.Categories, Every: 2 * time.Hour, MaxStale: recorded.MaxStale}},
	} {
		src := report.Sources{Timetable: c.given.Timetable, ScheduleFrom: "--every"}
		if err := c.given.Follow(ctx, regions.Builtin, reads, &src); err != nil {
			t.Fatal(err)
		}
		if src.ScheduleFrom != c.from || !reflect.DeepEqual(src.Timetable, c.want) {
			t.Errorf("%s: got %+v from %q; want %+v from %q", c.name, src.Timetable, src.ScheduleFrom, c.want, c.from)
		}
	}
}

// What a run records is what a report follows: its timetable whole, its
// day's plan and the costs it spends by; a run that made no plan records
// none, and the report then makes its own.
func TestARecordedScheduleIsTheOneFollowed(t *testing.T) {
	ctx := context.Background()
	db := storetest.Open(t)
	led := ledger.New(db)
	reads := struct {
		*store.DB
		*ledger.Ledger
	}{db, led}
	run := jobs.Timetable{Charts: []regions.Chart{{Code: "GB", Tier: 3, Depth: 50}}, Categories: []string{"", "10"},
		Every: 2 * time.Hour, MaxStale: 9 * time.Hour}
	plan := []report.PlanLine{{Pool: "default", Regions: 1, Pages: 2, RunsPerDay: 12, Units: 24, Capacity: 10000}}
	flags := report.FlagsSchedule{Timetable: jobs.NamedTimetable(time.Hour, []string{"US"}), Regions: "US"}
	for _, c := range []struct {
		name string
		plan []report.PlanLine
	}{{"with its plan", plan}, {"without a plan", nil}} {
		runs := costs.Default() // the run's costs, a pool larger than the command's
		runs.Pools = append([]ingest.Pool{}, runs.Pools...)
		runs.Pools[0].Limit *= 2
		if err := report.Record(ctx, led, run, c.plan, runs, time.Now()); err != nil {
			t.Fatal(err)
		}
		src := report.Sources{Timetable: flags.Timetable, Costs: costs.Default()}
		if err := flags.Follow(ctx, regions.Builtin, reads, &src); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(src.Timetable, run) || !reflect.DeepEqual(src.Plan, c.plan) {
			t.Errorf("%s: followed %+v with plan %+v; want %+v with %+v", c.name, src.Timetable, src.Plan, run, c.plan)
		}
		if costs.Hash(src.Costs) != costs.Hash(runs) || src.CostsNote == "" {
			t.Errorf("%s: the report's costs %s (%q), want the run's %s, said", c.name, costs.Hash(src.Costs), src.CostsNote, costs.Hash(runs))
		}
	}
}

package report_test

import (
	"context"
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/ingestworks/ingest/internal/storetest"
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

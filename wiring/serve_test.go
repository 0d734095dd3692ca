package wiring_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/ingestworks/ingest/costs"
	"github.com/ingestworks/ingest/internal/storetest"
	"github.com/ingestworks/ingest/ledger"
	"github.com/ingestworks/ingest/report"
	"github.com/ingestworks/ingest/wiring"
)

// A report follows the daemon's recorded schedule for what the flags do
// not give, and the flags for what they do.
func TestScheduleFollowsTheDaemon(t *testing.T) {
	ctx := context.Background()
	db := storetest.Open(t)
	flags := wiring.Schedule{Regions: []string{"US"}, Every: time.Hour}
	src := report.Sources{Regions: flags.Regions, Every: flags.Every, ScheduleFrom: "--every"}
	if err := flags.Follow(ctx, db, &src); err != nil || src.Every != time.Hour || src.ScheduleFrom != "--every" {
		t.Fatalf("nothing recorded: got every %s from %q (%v), want the flags'", src.Every, src.ScheduleFrom, err)
	}
	if err := ledger.New(db).SaveSchedule(ctx, 2*time.Hour, []string{"GB", "GB/10"}, time.Now()); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name    string
		given   wiring.Schedule
		every   time.Duration
		from    string
		regions []string
	}{
		{"none given", flags, 2 * time.Hour, "the daemon's", []string{"GB", "GB/10"}},
		{"every given", wiring.Schedule{Regions: flags.Regions, Every: time.Hour, EveryGiven: true}, time.Hour, "--every", []string{"GB", "GB/10"}},
		{"regions given", wiring.Schedule{Regions: flags.Regions, Every: time.Hour, RegionsGiven: true}, 2 * time.Hour, "the daemon's", []string{"US"}},
	} {
		src := report.Sources{Regions: c.given.Regions, Every: c.given.Every, ScheduleFrom: "--every"}
		if err := c.given.Follow(ctx, db, &src); err != nil {
			t.Fatal(err)
		}
		if src.Every != c.every || src.ScheduleFrom != c.from || !slices.Equal(src.Regions, c.regions) {
			t.Errorf("%s: got every %s from %q, regions %v; want %s from %q, %v", c.name, src.Every, src.ScheduleFrom, src.Regions,
				c.every, c.from, c.regions)
		}
	}
}

// With neither a database nor Redis, nothing was spent on this host: the
// limiter read is the pools whole.
func TestReadLimiterWithNothingIsWhole(t *testing.T) {
	h := &wiring.Host{Costs: costs.Default()}
	l, closeFn, err := h.ReadLimiter(nil, "-")
	if err != nil {
		t.Fatal(err)
	}
	defer closeFn()
	if _, ok := l.(report.WholePools); !ok {
		t.Errorf("got %T, want report.WholePools", l)
	}
}

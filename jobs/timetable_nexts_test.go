package jobs

import (
	"testing"
	"time"

	"github.com/ingestworks/ingest/regions"
)

// Every chart's next slot at once is each chart's own, as Next gives it,
// whatever its tier and category.
func TestNextsAreEachChartsNext(t *testing.T) {
	tt := Timetable{Charts: []regions.Chart{{Code: "US", Tier: 1, Depth: 200}, {Code: "GB", Tier: 1, Depth: 200},
		{Code: "FR", Tier: 3, Depth: 50}, {Code: "JP", Tier: 3, Depth: 50}}, Categories: []string{"", "10"}, Every: time.Hour}
	now := time.Date(2026, 3, 1, 12, 34, 56, 0, time.UTC)
	names, nexts := tt.Names(), tt.Nexts(now)
	if len(nexts) != len(names) || len(names) != 8 {
		t.Fatalf("%d next slots for %d charts, want 8 each", len(nexts), len(names))
	}
	for i, name := range names {
		if want := tt.Next(name, now); !nexts[i].Equal(want) || want.IsZero() {
			t.Errorf("%s: next slot %s, want %s", name, nexts[i], want)
		}
	}
}

// The refresh of kept videos runs at the timetable's period when it is
// known, and fetches every video due at each run when it is not.
func TestRefreshEveryIsThePeriodWhenKnown(t *testing.T) {
	tt := Timetable{Every: 15 * time.Minute}
	if got := tt.RefreshEvery(true); got != 15*time.Minute {
		t.Errorf("a known period: %v, want %v", got, tt.Every)
	}
	if got := tt.RefreshEvery(false); got != 0 {
		t.Errorf("an unknown period: %v, want zero", got)
	}
}

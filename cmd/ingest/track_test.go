package main

import (
	"testing"
	"time"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/jobs"
)

// Tracking runs in the middle of the last default region's slot, however
// few regions the schedule runs: after every chart pass of the period.
func TestTrackingRunsInTheLastDefaultSlot(t *testing.T) {
	t.Parallel()
	n := len(ingest.DefaultRegions)
	last, _ := jobs.Stagger(time.Hour, n-1, n)
	want := last.Offset + (time.Hour-last.Offset)/2
	for _, given := range []int{1, n} {
		if got := trackSchedule(time.Hour, given).Offset; got != want {
			t.Errorf("trackSchedule(1h, %d).Offset = %s, want %s", given, got, want)
		}
	}
}

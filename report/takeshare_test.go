package report

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/costs"
	"github.com/ingestworks/ingest/jobs"
)

// TestTakeShareCapsABackfillToThePlansLeftOver: a backfill without
// --max-units takes the whole pages the daemon's plan leaves, no more than
// it has left, and says so; with not one page left over it does not
// start, and says how to take a share anyway.
func TestTakeShareCapsABackfillToThePlansLeftOver(t *testing.T) {
	day := 24 * time.Hour
	c := costs.Default()
	page, err := costs.PerFetch(c, ingest.FetchSearchPage)
	if err != nil {
		t.Fatal(err)
	}
	roomy := &Freshness{}
	for pool := range page {
		roomy.Pools = append(roomy.Pools, PoolPace{Pool: pool, Left: 1000, Window: day})
	}
	for _, tc := range []struct {
		name   string
		plan   *Freshness
		left   int
		starts bool
		units  int64
		says   string
	}{
		{"room for more than it has left", roomy, 3, true, 3 * jobs.Sum(page), "taking at most"},
		{"no room", &Freshness{}, 3, false, 0, "give --max-units to take a share anyway"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			job := &jobs.Backfill{Costs: c, Query: ingest.SearchQuery{Region: "US"}}
			var out bytes.Buffer
			if got := TakeShare(&out, job, tc.plan, tc.left); got != tc.starts || job.MaxUnits != tc.units {
				t.Errorf("starts %v with --max-units %d, want %v with %d", got, job.MaxUnits, tc.starts, tc.units)
			}
			if !strings.Contains(out.String(), tc.says) || (tc.starts && job.Share == "") {
				t.Errorf("said %q (share %q), want %q", out.String(), job.Share, tc.says)
			}
		})
	}
}

// TestSharedOnlyWithoutACapAndWithPagesLeft: a backfill the operator
// capped, or with no page left, starts as it is without reading the plan;
// one without a cap takes its share of the plan.
func TestSharedOnlyWithoutACapAndWithPagesLeft(t *testing.T) {
	c := costs.Default()
	for _, tc := range []struct {
		name     string
		maxUnits int64
		left     int
		starts   bool
		read     bool
	}{
		{"capped", 100, 3, true, false},
		{"nothing left", 0, 0, true, false},
		{"uncapped, pages left", 0, 3, false, true}, // an empty plan has no room
	} {
		t.Run(tc.name, func(t *testing.T) {
			job := &jobs.Backfill{Costs: c, MaxUnits: tc.maxUnits, Query: ingest.SearchQuery{Region: "US"}}
			read := false
			var out bytes.Buffer
			starts, err := Shared(&out, job, tc.left, func() (*Freshness, error) { read = true; return &Freshness{}, nil })
			if err != nil || starts != tc.starts || read != tc.read {
				t.Errorf("starts %v (%v), plan read %v; want %v, read %v", starts, err, read, tc.starts, tc.read)
			}
		})
	}
}

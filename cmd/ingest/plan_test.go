package main

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"path/filepath"
	"testing"
	"time"

	"github.com/ingestworks/ingest/costs"
	"github.com/ingestworks/ingest/jobs"
	"github.com/ingestworks/ingest/regions"
)

// TestPlanCountsTracking checks that the daemon's plan line charges
// tracking to the stats pool: with no database yet, a batchGetStats call
// per 50 of the charts' videos every --track-every, and nothing when
// tracking is off.
func TestPlanCountsTracking(t *testing.T) {
	t.Parallel()
	charts := int64(len(regions.Default))
	for _, c := range []struct {
		name      string
		trackFor  string
		wantStats int64
	}{
		{"tracking", "7d", charts * 4 * 24}, // charts of 4 pages each: 200 videos, 4 calls an hour each
		{"off", "0", 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			var logs bytes.Buffer
			s := &settings{db: filepath.Join(t.TempDir(), "none.db"), costs: costs.Default(),
				logger: slog.New(slog.NewJSONHandler(&logs, nil))}
			f := &runFlags{every: time.Hour, cats: []string{""},
				track: trackFlags{forText: c.trackFor, every: jobs.TrackEvery}}
			if err := checkPlan(context.Background(), s, f, regions.Charts(regions.Default...)); err != nil {
				t.Fatal(err)
			}
			got := map[string]int64{}
			for dec := json.NewDecoder(&logs); ; {
				var line struct {
					Msg   string `json:"msg"`
					Pool  string `json:"pool"`
					Units int64  `json:"units_per_day"`
				}
				if dec.Decode(&line) != nil {
					break
				}
				if line.Msg == "plan" {
					got[line.Pool] = line.Units
				}
			}
			if got["stats"] != c.wantStats || got["default"] != charts*4*24+charts {
				t.Errorf("units_per_day %v, want stats %d and default %d", got, c.wantStats, charts*4*24+charts)
			}
		})
	}
}

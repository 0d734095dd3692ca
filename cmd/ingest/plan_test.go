package main

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"path/filepath"
	"testing"
	"time"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/regions"
)

// TestPlanCountsTracking checks that the daemon's plan line charges
// tracking to the stats pool: with no database yet, a batchGetStats call
// per 50 of the charts' videos every --track-every, and nothing when
// tracking is off.
func TestPlanCountsTracking(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name      string
		trackFor  string
		wantStats int64
	}{
		{"tracking", "7d", 8 * 4 * 24}, // 8 charts of 4 pages: 1,600 videos, 32 calls an hour
		{"off", "0", 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			var logs bytes.Buffer
			s := &settings{db: filepath.Join(t.TempDir(), "none.db"), costs: ingest.DefaultCosts(),
				logger: slog.New(slog.NewJSONHandler(&logs, nil))}
			f := &runFlags{every: time.Hour, cats: []string{""},
				track: trackFlags{forText: c.trackFor, every: regions.TrackEvery}}
			codes := []string{"US", "GB", "DE", "FR", "IN", "BR", "AU", "CA"}
			if err := checkPlan(context.Background(), s, f, codes); err != nil {
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
			if got["stats"] != c.wantStats || got["default"] != 8*4*24+8 {
				t.Errorf("units_per_day %v, want stats %d and default %d", got, c.wantStats, 8*4*24+8)
			}
		})
	}
}

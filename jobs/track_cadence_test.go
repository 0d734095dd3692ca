package jobs_test

import (
	"context"
	"testing"
	"time"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/jobs"
)

// TestTrackingCadenceFollowsTheTier: with US at tier 1 and GB at tier 3,
// over six hourly tracking runs a video on US's chart is read at every
// run, one only on GB's at every third (twice), and one on both at every
// run: its best tier wins. Tracking's units follow what it read.
func TestTrackingCadenceFollowsTheTier(t *testing.T) {
	t.Parallel()
	r := newSimRig(t)
	ctx := context.Background()
	r.chart(t, "US")
	r.chart(t, "GB")
	tiers := map[string]int{"US": 1, "GB": 3}
	track := &jobs.Track{QuotaKey: "q", Costs: r.costs, Limiter: r.limiter, Source: r.client, Store: r.db,
		Logger: quiet(), Clock: r.clock,
		Cadence: jobs.Cadence{Tier: func(code string) int { return tiers[code] }, Every: time.Hour}}
	const runs = 6
	var units int64
	for i := 0; i < runs; i++ {
		r.clock.Add(time.Hour)
		res := track.Run(ctx)
		if res.Status != ingest.StatusCompleted {
			t.Fatalf("tracking run %d: %s %v", i, res.Status, res.Err)
		}
		units += res.Units["stats"]
		if want := int64((res.Tracked + jobs.TrackBatch - 1) / jobs.TrackBatch); res.Units["stats"] != want {
			t.Errorf("run %d read %d videos for %d units, want %d", i, res.Tracked, res.Units["stats"], want)
		}
	}
	want := map[string]int64{"US only": runs, "GB only": runs / 3, "both": runs}
	got := map[string][]int64{}
	rows, err := r.db.Reader().Query(`SELECT
  EXISTS (SELECT 1 FROM trending_entries AS e WHERE e.vid = v.vid AND e.region = 'US'),
  EXISTS (SELECT 1 FROM trending_entries AS e WHERE e.vid = v.vid AND e.region = 'GB'),
  (SELECT count(*) FROM video_stats AS s WHERE s.vid = v.vid)
FROM videos AS v`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var us, gb bool
		var reads int64
		if err := rows.Scan(&us, &gb, &reads); err != nil {
			t.Fatal(err)
		}
		key := map[[2]bool]string{{true, false}: "US only", {false, true}: "GB only", {true, true}: "both"}[[2]bool{us, gb}]
		got[key] = append(got[key], reads)
	}
	for key, n := range want {
		if len(got[key]) == 0 && key != "both" {
			t.Fatalf("no video %s: the test shows nothing", key)
		}
		for _, reads := range got[key] {
			if reads != n {
				t.Errorf("a video %s was read %d times in %d hourly runs, want %d", key, reads, runs, n)
			}
		}
	}
	t.Logf("US only %d, GB only %d, both %d videos; %d stats units", len(got["US only"]), len(got["GB only"]), len(got["both"]), units)
}

// TestTrackingCadenceStretchesIntoTheBudget: the reads a day the tiers
// ask for are stretched by the smallest whole factor that fits the stats
// budget, every tier alike, so the tiers keep their order.
func TestTrackingCadenceStretchesIntoTheBudget(t *testing.T) {
	t.Parallel()
	var charted []ingest.Charted
	for i := 0; i < 500; i++ {
		region := "US"
		if i%2 == 1 {
			region = "GB"
		}
		charted = append(charted, ingest.Charted{ID: string(rune('a'+i%26)) + string(rune('A'+i/26)), Regions: []string{region}})
	}
	tier := func(code string) int { return map[string]int{"US": 1, "GB": 3}[code] }
	// 250 videos hourly and 250 every 3 hours: 8,000 reads a day, 160 units.
	for _, tc := range []struct {
		budget int64
		us, gb int64
	}{
		{0, 1, 3}, {160, 1, 3}, {159, 2, 6}, {80, 2, 6}, {50, 4, 12}, {1, 160, 480},
	} {
		p := jobs.Cadence{Tier: tier, Every: time.Hour, Budget: tc.budget}.Periods(charted)
		if p[0] != tc.us || p[1] != tc.gb {
			t.Errorf("budget %d: periods US %d, GB %d runs; want %d, %d", tc.budget, p[0], p[1], tc.us, tc.gb)
		}
		c := jobs.Cadence{Tier: tier, Every: time.Hour, Budget: tc.budget}
		var reads int64
		start := time.Date(2026, 11, 20, 0, 30, 0, 0, time.UTC)
		runs := tc.gb // every video's period divides it: each is read runs/period times
		for h := int64(0); h < runs; h++ {
			reads += int64(len(c.Due(charted, start.Add(time.Duration(h)*time.Hour))))
		}
		if want := 250*runs/tc.us + 250*runs/tc.gb; reads != want {
			t.Errorf("budget %d: %d reads over %d hourly runs, want %d", tc.budget, reads, runs, want)
		}
	}
}

package pace_test

import (
	"math"
	"testing"
	"time"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/pace"
	"github.com/ingestworks/ingest/regions"
)

// Three workers of three databases on one quota key, each with the eight
// regions and their category charts, share the pool three ways over a
// day: once every worker has spent (the second hour on), their plans
// together spend no more than the pool holds, the limiter refuses none of
// their passes, each counts on a third of the pool, and each keeps its
// charts within its plan (the sweep's hourly promises, worker by worker).
func TestDaysThreeWorkersShareThePool(t *testing.T) {
	t.Parallel()
	start := time.Date(2026, 11, 10, 9, 0, 0, 0, pacific)
	end := start.Add(26 * time.Hour)
	first := newLite(t, 4000, regions.Charts(regions8...), categories, 3*time.Hour, start)
	crew := []*lite{first, first.join(), first.join()}
	var pcs []*pace.Pacer
	var watches []*sweepWatch
	for _, l := range crew {
		pc := l.pacer()
		l.catchUp(pc)
		pcs, watches = append(pcs, pc), append(watches, newSweepWatch(t, l))
	}
	var pool ingest.Pool
	for _, p := range first.pools {
		if p.Name == ingest.DefaultPool {
			pool = p
		}
	}
	settled := start.Add(2 * time.Hour)
	var hour time.Time
	refused, most, fails := 0, 0.0, 0
	slottedAll(crew, pcs, start, end, func(now time.Time) {
		if h := now.Truncate(time.Hour); h.Equal(hour) {
			return
		}
		hour = now.Truncate(time.Hour)
		var planned float64
		for k, pc := range pcs {
			watches[k].check(pc)
			for _, ps := range pc.Status().Pools {
				if ps.Pool != pool.Name {
					continue
				}
				planned += ps.Planned
				if !now.Before(settled) && math.Abs(ps.Share-1.0/3) > 1e-9 && fails < 6 {
					fails++
					t.Errorf("at %s worker %d counts on %.3f of the pool, want a third", now.In(pacific).Format("Jan 2 15:04"), k, ps.Share)
				}
			}
		}
		if now.Before(settled) {
			refused = first.refused
			return
		}
		holds := pace.Sustainable(pool, now, 0) * 3600
		most = max(most, planned/holds)
		if planned > holds+1e-6 && fails < 6 {
			fails++
			t.Errorf("at %s the three plans spend %.1f units an hour together, over the %.1f the pool holds", now.In(pacific).Format("Jan 2 15:04"), planned, holds)
		}
	})
	t.Logf("the three plans together: at most %.3f of what the pool holds; refusals %d before the second hour, %d after", most, refused, first.refused-refused)
	if n := first.refused - refused; n != 0 {
		t.Errorf("the limiter refused %d passes once every worker had spent, want none", n)
	}
	for k, w := range watches {
		t.Logf("worker %d: largest age/cadence by tier %v, largest age of a kept chart %s", k, w.worst, w.oldest.Round(time.Minute))
		if w.fails > 0 {
			t.Errorf("worker %d: %d failures of the hourly promises", k, w.fails)
		}
		if w.worst[1] > 1 {
			t.Errorf("worker %d: a region's own chart grew %.3f of its planned cadence old", k, w.worst[1])
		}
	}
}

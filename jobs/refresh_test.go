package jobs_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/clock"
	"github.com/ingestworks/ingest/internal/rig/passtest"
	"github.com/ingestworks/ingest/internal/rig/storetest"
	"github.com/ingestworks/ingest/jobs"
	"github.com/ingestworks/ingest/retention"
	"github.com/ingestworks/ingest/store"
)

// simClock is the clock a test moves: the upstream's, the pages', the
// jobs'.
type simClock struct {
	mu sync.Mutex
	at time.Time
}

func (c *simClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.at
}

func (c *simClock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.at = c.at.Add(d)
}

// simRig is a rig whose fake upstream's charts move with a clock the test
// moves, and whose client stamps pages with it.
type simRig struct {
	*rig
	clock *simClock
}

func newSimRig(t *testing.T) *simRig {
	t.Helper()
	clock := &simClock{at: time.Now().UTC().Truncate(time.Hour)}
	r := rigOf(passtest.NewWith(t, storetest.Open(t), passtest.Options{Clock: clock}))
	r.fake.Move(7, clock.Now)
	r.fake.SetClock(clock.Now)
	return &simRig{rig: r, clock: clock}
}

func (r *simRig) refresh() *jobs.Refresh {
	return &jobs.Refresh{QuotaKey: "q", Costs: r.costs, Limiter: r.limiter, Source: r.client, Store: retention.GoneStore{DB: r.db},
		Logger: quiet(), Clock: r.clock}
}

func (r *simRig) chart(t *testing.T, region string) jobs.PassResult {
	t.Helper()
	p := r.pass(region)
	p.Clock = r.clock
	res := p.Run(context.Background())
	if res.Status != ingest.StatusCompleted {
		t.Fatalf("pass %s: %s %v", region, res.Status, res.Err)
	}
	return res
}

// TestRefreshFetchesAgainAndDeletesWhatIsGone: 22 days after a chart,
// the refresh fetches its videos again by id, 50 a call, one unit each; a
// video deleted upstream and one made private are deleted with their
// entries, counted, and leave a tombstone.
func TestRefreshFetchesAgainAndDeletesWhatIsGone(t *testing.T) {
	t.Parallel()
	r := newSimRig(t)
	ctx := context.Background()
	stored := r.chart(t, "GB").Videos
	chart := r.fake.Chart("GB")
	deleted, private := chart[3].ID, chart[4].ID
	r.fake.Delete(deleted)
	r.fake.MakePrivate(private)
	if res := r.refresh().Run(ctx); res.Refreshed != 0 || res.Calls != 0 {
		t.Fatalf("a refresh of a fresh chart fetched %d videos in %d calls, want none", res.Refreshed, res.Calls)
	}
	r.clock.Add(22 * 24 * time.Hour)
	before := r.ledgerUnits(t)
	res := r.refresh().Entry()
	end, _ := (&jobs.Runner{Clock: clock.System, Locker: r.limiter, Logger: quiet()}).Run(ctx, res)
	if end.Status != ingest.StatusCompleted || end.Gone != 2 {
		t.Fatalf("refresh: %s, %d gone (%v); want completed, 2 gone", end.Status, end.Gone, end.Err)
	}
	calls := (stored + jobs.RefreshBatch - 1) / jobs.RefreshBatch
	if got := r.ledgerUnits(t) - before; got != int64(calls) || end.Units[ingest.DefaultPool] != int64(calls) {
		t.Errorf("refresh of %d videos spent %d units (run says %d), want %d: 50 ids a call", stored, got,
			end.Units[ingest.DefaultPool], calls)
	}
	for _, id := range []string{deleted, private} {
		at, err := r.db.GoneAt(ctx, id)
		if err != nil || !at.Equal(r.clock.Now()) {
			t.Errorf("GoneAt(%s) = %v, %v; want the refresh's time", id, at, err)
		}
		if n := count(t, r.db, `SELECT count(*) FROM trending_entries AS e JOIN videos AS v ON v.vid = e.vid WHERE v.id = ?`, id); n != 0 {
			t.Errorf("%s: %d entries left after it went", id, n)
		}
	}
	held, err := retention.ReadHeld(ctx, r.db)
	if err != nil {
		t.Fatal(err)
	}
	if !held.Video.Equal(r.clock.Now()) {
		t.Errorf("oldest video text from %s after the refresh, want %s", held.Video, r.clock.Now())
	}
}

func count(t *testing.T, db *store.DB, q string, args ...any) int64 {
	t.Helper()
	var n int64
	if err := db.Reader().QueryRow(q, args...).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestFortyFiveDaysWithinTheTerms runs the daemon's jobs once a simulated
// day for 45 days (two charts, refreshing, tracking, the standard
// standing's prune) against an upstream whose charts move and which
// deletes a video on day 5 and hides one on day 12, the refresh fetching
// a share of what is due each day: every day, the oldest
// statistic and the oldest video text are at most 30 days old; each gone
// video is deleted by the first refresh after it is due; refreshing costs
// a small part of what the charts cost.
func TestFortyFiveDaysWithinTheTerms(t *testing.T) {
	t.Parallel()
	r := newSimRig(t)
	ctx := context.Background()
	prune := &jobs.Prune{Standing: ingest.StandardStanding(), Span: r.costs.Span(), Store: retention.Store{DB: r.db}, Clock: r.clock}
	track := &jobs.Track{QuotaKey: "q", Costs: r.costs, Limiter: r.limiter, Source: r.client, Store: r.db,
		Logger: quiet(), Clock: r.clock}
	gone := map[string]int{} // id: the day it went upstream
	var chartUnits, refreshUnits, goneSeen int64
	var sizes []int64
	for day := 0; day < 45; day++ {
		for _, region := range []string{"US", "GB"} {
			chartUnits += r.chart(t, region).Units[ingest.DefaultPool]
		}
		switch day {
		case 5:
			id := r.fake.Chart("US")[0].ID
			r.fake.Delete(id)
			gone[id] = day
		case 12:
			id := r.fake.Chart("GB")[1].ID
			r.fake.MakePrivate(id)
			gone[id] = day
		}
		refresh := r.refresh()
		refresh.Every = 24 * time.Hour // a share a daily pass: the terms hold all the same
		ref := refresh.Run(ctx)
		if ref.Status != ingest.StatusCompleted {
			t.Fatalf("day %d: refresh %s: %v", day, ref.Status, ref.Err)
		}
		refreshUnits += ref.Units[ingest.DefaultPool]
		goneSeen += ref.Gone
		if res := track.Run(ctx); res.Status != ingest.StatusCompleted {
			t.Fatalf("day %d: tracking %s: %v", day, res.Status, res.Err)
		}
		if res := prune.Run(ctx); res.Status != ingest.StatusCompleted {
			t.Fatalf("day %d: prune %s: %v", day, res.Status, res.Err)
		}
		held, err := retention.ReadHeld(ctx, r.db)
		if err != nil {
			t.Fatal(err)
		}
		now := r.clock.Now()
		for what, at := range map[string]time.Time{"statistic": held.Stat, "video text": held.Video} {
			if age := now.Sub(at); age > ingest.DataFor {
				t.Errorf("day %d: the oldest %s is %s old, more than 30 days", day, what, age)
			}
		}
		for id, went := range gone {
			at, _ := r.db.GoneAt(ctx, id)
			// Due once its text is RefreshAfter old; the daily refresh after
			// that finds it gone.
			if due := went + int(ingest.RefreshAfter/(24*time.Hour)) + 1; day >= due && at.IsZero() {
				t.Errorf("day %d: %s, gone upstream on day %d, still held", day, id, went)
			}
		}
		sz, _ := r.db.Size(ctx)
		sizes = append(sizes, sz.Bytes)
		if day%5 == 4 || day == 44 {
			t.Logf("day %2d: oldest statistic %4.1f days, oldest video text %4.1f days; units so far: charts %d, refresh %d; gone %d; %.1f MB",
				day+1, now.Sub(held.Stat).Hours()/24, now.Sub(held.Video).Hours()/24, chartUnits, refreshUnits, goneSeen, float64(sz.Bytes)/1e6)
		}
		r.clock.Add(24 * time.Hour)
	}
	if goneSeen != int64(len(gone)) {
		t.Errorf("%d videos counted gone, want %d", goneSeen, len(gone))
	}
	lo, hi := sizes[30], sizes[30]
	for _, s := range sizes[30:] {
		lo, hi = min(lo, s), max(hi, s)
	}
	t.Logf("after day 30 the database is %.2f to %.2f MB (%.1f%%); refreshing spent %d units against the charts' %d (%.1f%%)",
		float64(lo)/1e6, float64(hi)/1e6, 100*float64(hi-lo)/float64(lo), refreshUnits, chartUnits, 100*float64(refreshUnits)/float64(chartUnits))
	if refreshUnits == 0 {
		t.Error("45 days and nothing refreshed")
	}
}

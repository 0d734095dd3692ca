package ledger

import (
	"context"
	"fmt"
	"maps"
	"testing"
	"time"

	"github.com/ingestworks/ingest"
)

// A chart's cost per pass is the mean of its completed passes since the
// time asked, from the ledger: stopped passes, older passes and calls
// given back are not in it. Tracking's passes, which have no run, are its
// recorded passes, each the calls made between its start and its end.
func TestPassCosts(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, db both) {
		ctx := context.Background()
		t0 := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
		n := 0
		pass := func(category string, at time.Time, status ingest.RunStatus, units ...int64) {
			t.Helper()
			id, err := db.StartRun(ctx, "US", category, ingest.Trending, at)
			if err != nil {
				t.Fatal(err)
			}
			for _, u := range units {
				n++
				call := ingest.Call{QuotaKey: "k", ID: fmt.Sprint("c", n), At: at, Op: "videos.list", Region: "US",
					RunID: id, Charges: []ingest.Charge{{Pool: "default", Units: u}}}
				if err := db.RecordCall(ctx, call); err != nil {
					t.Fatal(err)
				}
				if u == 100 { // never reached the upstream
					if err := db.RecordGiveBack(ctx, call, time.Now()); err != nil {
						t.Fatal(err)
					}
				}
			}
			if err := db.FinishRun(ctx, id, ingest.RunEnd{Status: status, At: at.Add(time.Second)}); err != nil {
				t.Fatal(err)
			}
		}
		pass("", t0.Add(-2*time.Hour), ingest.StatusCompleted, 9, 9) // before since
		pass("", t0, ingest.StatusCompleted, 1, 1, 1, 1)
		pass("", t0.Add(time.Hour), ingest.StatusCompleted, 1, 1, 100)
		pass("", t0.Add(2*time.Hour), ingest.StatusStopped, 1)
		pass("10", t0, ingest.StatusCompleted, 2, 3)
		track := func(at time.Time, status ingest.RunStatus, units ...int64) {
			t.Helper()
			end := at.Add(time.Duration(len(units)) * time.Second)
			if err := db.RecordPass(ctx, TrackEntry, at, end, at.Add(-time.Second), status); err != nil {
				t.Fatal(err)
			}
			for i, u := range units {
				n++
				call := ingest.Call{QuotaKey: "k", ID: fmt.Sprint("c", n), At: at.Add(time.Duration(i) * time.Second),
					Op: ingest.OpBatchGetStats, Charges: []ingest.Charge{{Pool: "stats", Units: u}}}
				if err := db.RecordCall(ctx, call); err != nil {
					t.Fatal(err)
				}
				if u == 100 {
					if err := db.RecordGiveBack(ctx, call, time.Now()); err != nil {
						t.Fatal(err)
					}
				}
			}
		}
		track(t0.Add(-3*time.Hour), ingest.StatusCompleted, 7, 7)            // before since
		track(t0.Add(-30*time.Minute), ingest.StatusCompleted, 1, 1, 100, 1) // 3 units: one call given back
		track(t0.Add(30*time.Minute), ingest.StatusCompleted, 1, 1)
		track(t0.Add(60*time.Minute), ingest.StatusStopped, 9) // not a whole pass
		track(t0.Add(90*time.Minute), ingest.StatusCompleted, 1)
		n++ // a call of no pass recorded (an earlier version's) is no pass's cost
		if err := db.RecordCall(ctx, ingest.Call{QuotaKey: "k", ID: fmt.Sprint("c", n), At: t0.Add(100 * time.Minute),
			Op: ingest.OpBatchGetStats, Charges: []ingest.Charge{{Pool: "stats", Units: 30}}}); err != nil {
			t.Fatal(err)
		}
		// Another key's passes and tracking are not this key's costs.
		other := func(call ingest.Call) {
			t.Helper()
			n++
			call.QuotaKey, call.ID = "other", fmt.Sprint("c", n)
			if err := db.RecordCall(ctx, call); err != nil {
				t.Fatal(err)
			}
		}
		id, err := db.StartRun(ctx, "GB", "", ingest.Trending, t0)
		if err != nil {
			t.Fatal(err)
		}
		other(ingest.Call{At: t0, Op: "videos.list", Region: "GB", RunID: id, Charges: []ingest.Charge{{Pool: "default", Units: 50}}})
		if err := db.FinishRun(ctx, id, ingest.RunEnd{Status: ingest.StatusCompleted, At: t0.Add(time.Second)}); err != nil {
			t.Fatal(err)
		}
		other(ingest.Call{At: t0.Add(30*time.Minute + time.Second), Op: ingest.OpBatchGetStats, Charges: []ingest.Charge{{Pool: "stats", Units: 40}}})
		got, err := db.PassCosts(ctx, "k", t0.Add(-time.Hour))
		if err != nil {
			t.Fatal(err)
		}
		if got["US"]["default"] != 3 || got["US/10"]["default"] != 5 || len(got) != 3 {
			t.Errorf("costs %v, want US 3 (4 and 2), US/10 5 and track", got)
		}
		if got := got[TrackEntry]; got["stats"] != 2 || len(got) != 1 {
			t.Errorf("tracking's cost %v, want stats 2 (passes of 3, 2 and 1 units)", got)
		}
		// The stopped passes since a time are the charts' runs the quota
		// stopped, a backfill's left out.
		pass("10", t0.Add(3*time.Hour), ingest.StatusStopped)
		pass("", t0.Add(-90*time.Minute), ingest.StatusStopped, 1) // before since
		sid, err := db.StartRun(ctx, "US", "", ingest.Search, t0.Add(3*time.Hour))
		if err != nil {
			t.Fatal(err)
		}
		if err := db.FinishRun(ctx, sid, ingest.RunEnd{Status: ingest.StatusStopped, At: t0.Add(3 * time.Hour)}); err != nil {
			t.Fatal(err)
		}
		stopped, err := db.StoppedPasses(ctx, t0.Add(-time.Hour))
		if err != nil {
			t.Fatal(err)
		}
		var saw []string
		for _, s := range stopped {
			saw = append(saw, fmt.Sprintf("%s %s %s", s.Chart, s.Region, s.Started.Sub(t0)))
		}
		if fmt.Sprint(saw) != "[US US 2h0m0s US/10 US 3h0m0s]" {
			t.Errorf("stopped passes %q, want US at 2h and US/10 at 3h", saw)
		}
	})
}

// Pacing's other reads, on both databases: each chart's latest completed
// pass (a stopped run after it does not move it; the category names a
// pass reads are not its cost), the slot of tracking's and the prune's
// latest completed pass (or its start, when no slot started it), and the plan a
// pacing worker publishes, one per quota key, replaced in place.
func TestLastPassesAndPlans(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, db both) {
		ctx := context.Background()
		t0 := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
		n := 0
		pass := func(at time.Time, status ingest.RunStatus, ops ...string) {
			t.Helper()
			id, err := db.StartRun(ctx, "US", "", ingest.Trending, at)
			if err != nil {
				t.Fatal(err)
			}
			for _, op := range ops {
				n++
				call := ingest.Call{QuotaKey: "k", ID: fmt.Sprint("c", n), At: at, Op: op, Region: "US",
					RunID: id, Charges: []ingest.Charge{{Pool: "default", Units: 1}}}
				if err := db.RecordCall(ctx, call); err != nil {
					t.Fatal(err)
				}
			}
			if err := db.FinishRun(ctx, id, ingest.RunEnd{Status: status, At: at.Add(time.Second)}); err != nil {
				t.Fatal(err)
			}
		}
		pass(t0, ingest.StatusCompleted, ingest.OpCategoriesList, ingest.OpVideosList, ingest.OpVideosList)
		pass(t0.Add(time.Hour), ingest.StatusCompleted, ingest.OpVideosList, ingest.OpVideosList)
		pass(t0.Add(2*time.Hour), ingest.StatusStopped, ingest.OpVideosList)
		for _, p := range []struct {
			entry            string
			slot, start, end time.Time
			status           ingest.RunStatus
		}{
			{TrackEntry, t0.Add(25 * time.Minute), t0.Add(25*time.Minute + 10*time.Second), t0.Add(31 * time.Minute), ingest.StatusCompleted},
			{TrackEntry, t0.Add(35 * time.Minute), t0.Add(35 * time.Minute), t0.Add(36 * time.Minute), ingest.StatusStopped},
			{"prune", time.Time{}, t0.Add(40 * time.Minute), t0.Add(41 * time.Minute), ingest.StatusCompleted},
			{"prune", t0.Add(-2 * time.Hour), t0.Add(-2 * time.Hour), t0.Add(-2 * time.Hour), ingest.StatusCompleted}, // before since
		} {
			if err := db.RecordPass(ctx, p.entry, p.start, p.end, p.slot, p.status); err != nil {
				t.Fatal(err)
			}
		}
		last, err := db.LastPasses(ctx, "k", t0.Add(-time.Hour))
		if err != nil {
			t.Fatal(err)
		}
		want := map[string]time.Time{"US": t0.Add(time.Hour), TrackEntry: t0.Add(25 * time.Minute), "prune": t0.Add(40 * time.Minute)}
		if !maps.EqualFunc(last, want, time.Time.Equal) {
			t.Errorf("last passes %v, want %v: US's stopped run after its pass does not count, nor tracking's; tracking's counts from its slot, however late it started and long it ran", last, want)
		}
		if _, err := db.StartRun(ctx, "US", "", ingest.Trending, t0.Add(3*time.Hour)); err != nil {
			t.Fatal(err)
		}
		music, err := db.StartRun(ctx, "US", "10", ingest.Trending, t0.Add(4*time.Hour))
		if err != nil {
			t.Fatal(err)
		}
		if err := db.FinishRun(ctx, music, ingest.RunEnd{Status: ingest.StatusCompleted, At: t0.Add(4 * time.Hour)}); err != nil {
			t.Fatal(err)
		}
		for chart, want := range map[string]time.Time{"US": t0.Add(2 * time.Hour), "US/10": t0.Add(4 * time.Hour), "GB": {}} {
			if got, err := db.LastStart(ctx, chart); err != nil || !got.Equal(want) {
				t.Errorf("last start of %s: %s, %v; want %s (the newest run that ended, not the one in flight)", chart, got, err, want)
			}
		}
		if got, _ := db.LastPasses(ctx, "k", t0.Add(5*time.Hour)); len(got) != 0 {
			t.Errorf("last passes since after every pass: %v, want none", got)
		}
		costs, err := db.PassCosts(ctx, "k", t0.Add(-time.Hour))
		if err != nil {
			t.Fatal(err)
		}
		if got := costs["US"]["default"]; got != 2 {
			t.Errorf("US's cost per pass %v, want 2: the category names are not a pass's cost", got)
		}

		if _, _, ok, err := db.Plan(ctx, "k"); ok || err != nil {
			t.Fatalf("a plan before any was saved: ok %v, err %v", ok, err)
		}
		for i, doc := range []string{`{"At":"a"}`, `{"At":"b"}`} {
			if err := db.SavePlan(ctx, "k", t0.Add(time.Duration(i)*time.Minute), []byte(doc)); err != nil {
				t.Fatal(err)
			}
		}
		if err := db.SavePlan(ctx, "other", t0, []byte(`{"At":"other"}`)); err != nil {
			t.Fatal(err)
		}
		doc, at, ok, err := db.Plan(ctx, "k")
		if err != nil || !ok || string(doc) != `{"At":"b"}` || !at.Equal(t0.Add(time.Minute)) {
			t.Errorf("plan of k: %s at %s (ok %v, err %v); want the second one saved, at %s", doc, at, ok, err, t0.Add(time.Minute))
		}
	})
}

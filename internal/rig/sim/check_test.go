package sim

import (
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/costs"
	"github.com/ingestworks/ingest/regions"
)

var t0 = time.Date(2026, 10, 25, 0, 0, 0, 0, time.UTC)

// history is a day of one tier-1 chart at --every 1h, passes at the
// given hours, tracking at --track-every 1h at the given minutes, and
// the refresh and the prune at every slot.
func history(passes []float64, tracked []float64, units int64) *History {
	h := &History{Config: Config{Shape: Shape{Every: time.Hour, MaxStale: 24 * time.Hour, TrackFor: time.Hour, TrackEvery: time.Hour,
		Costs: costs.Default()}, Start: t0, Days: 1}, End: t0.Add(24 * time.Hour), Starts: []time.Time{t0},
		Charts: []regions.Chart{{Code: "US", Tier: 1, Depth: 50}}}
	var charged int64
	for _, hr := range passes {
		at := t0.Add(time.Duration(hr * float64(time.Hour)))
		h.Runs = append(h.Runs, Run{Region: "US", Status: "completed", Started: at})
		charged += units
		h.Calls = append(h.Calls, Call{At: at, Path: "/youtube/v3/videos", Charged: map[string]int64{"default": charged}})
		h.Ledger = append(h.Ledger, Entry{Pool: "default", Units: units, At: at})
	}
	h.Passes = housekeepingPasses()
	var stats int64
	for _, m := range tracked {
		stats++
		at := t0.Add(time.Duration(m * float64(time.Minute)))
		h.Calls = append(h.Calls, Call{At: at, Path: "/youtube/v3/videos:batchGetStats", Charged: map[string]int64{"default": charged, "stats": stats}})
		h.Ledger = append(h.Ledger, Entry{Pool: "stats", Units: 1, At: at})
	}
	return h
}

func hourly(n int, every float64) []float64 {
	var out []float64
	for i := range n {
		out = append(out, float64(i)*every)
	}
	return out
}

func TestCheckPassesAGoodDay(t *testing.T) {
	if f := Check(history(hourly(24, 1), hourly(24, 60), 1)); len(f) != 0 {
		t.Errorf("a pass every hour, tracking every hour: %v", f)
	}
}

func TestCheckFindsAWindowOver(t *testing.T) {
	f := Check(history(hourly(24, 1), hourly(24, 60), 400)) // 9,600 units in a day: over 9,500
	if len(f) != 1 || !strings.Contains(f[0], "pool default: the upstream counted 9600 units") {
		t.Errorf("got %q", f)
	}
}

func TestCheckFindsAChartLate(t *testing.T) {
	passes := append(hourly(10, 1), hourly(24, 1)[11:]...) // 9h to 11h: no pass
	f := Check(history(passes, hourly(24, 60), 1))
	if len(f) != 1 || !strings.Contains(f[0], "US: no pass from 2026-10-25T09:00:00Z to 2026-10-25T11:00:00Z") {
		t.Errorf("got %q", f)
	}
	h := history(passes, hourly(24, 60), 1)
	h.Down = []Interval{{t0.Add(9*time.Hour + time.Minute), t0.Add(10 * time.Hour)}}
	if f := Check(h); len(f) != 0 {
		t.Errorf("the gap had the process down for most of an hour: %q", f)
	}
	h = history(passes, hourly(24, 60), 1)
	h.Faults = []Fault{{At: t0.Add(9*time.Hour + 30*time.Minute), Calls: 1}} // failed the call at 10h
	if f := Check(h); len(f) != 0 {
		t.Errorf("the gap had the upstream failing from 9:30 to 10:00: %q", f)
	}
}

// A chart caught up at a start is its next slot's pass: a second pass
// sooner than its cadence less a step after it is a downtime paid twice;
// a cadence after it, or with --pace=false, every slot running, is not.
func TestCheckFindsTwoPassesAfterADowntime(t *testing.T) {
	restart := t0.Add(5*time.Hour + 12*time.Minute)
	// passes: every hour to 5h, the catch-up at 5:12, then every hour from next
	passes := func(next int) []float64 {
		return append(append(hourly(6, 1), 5.2), hourly(24, 1)[next:]...)
	}
	for _, c := range []struct {
		name   string
		passes []float64
		noPace bool
		want   string
	}{
		{"a second pass half an hour after the fresh start's", append([]float64{0, 0.5}, hourly(24, 1)[1:]...), false,
			"US: passed at 2026-10-25T00:00:00Z, its first pass since the start, and again at 00:30:00 (30m0s later)"},
		{"the slot after the start's catch-up run again", passes(6), false,
			"US: passed at 2026-10-25T05:12:00Z, its first pass since the start, and again at 06:00:00 (48m0s later)"},
		{"the catch-up its next slot's pass", passes(7), false, ""},
		{"unpaced, every slot runs", passes(6), true, ""},
	} {
		h := history(c.passes, hourly(24, 60), 1)
		h.Starts = append(h.Starts, restart)
		h.NoPace = c.noPace
		f := Check(h)
		switch {
		case c.want == "" && len(f) != 0:
			t.Errorf("%s: got %q, want nothing", c.name, f)
		case c.want != "" && (len(f) != 1 || !strings.Contains(f[0], c.want)):
			t.Errorf("%s: got %q, want %q", c.name, f, c.want)
		}
	}
}

// TestCheckReadsALateSlotsPassAsNoCatchUp: a life's first pass that a
// slot of that life started, held back within its slot by a wrong Date,
// is that slot's pass, and the next slot's pass is held to the cadence
// from its slot; a pass with no slot at a start, or one for a slot the
// downtime missed, is the catch-up, and the next slot after it a second
// pass.
func TestCheckReadsALateSlotsPassAsNoCatchUp(t *testing.T) {
	at := func(hm float64) time.Time { return t0.Add(time.Duration(hm * float64(time.Hour))) }
	// the Date wrong from 5:50 for 20 minutes, the process down from 5:55
	// to 5:56 inside it
	skew, down := Interval{at(5).Add(50 * time.Minute), at(6).Add(10 * time.Minute)}, Interval{at(5).Add(55 * time.Minute), at(5).Add(56 * time.Minute)}
	for _, c := range []struct {
		name   string
		second float64 // the life's second pass
		slot   time.Time
		want   string
	}{
		{"its slot's pass, a quarter late, and the next slot", 7, at(6), ""},
		{"its slot's pass, and another half an hour after its slot", 6.5, at(6),
			"US: passed at 2026-10-25T06:15:00Z for its slot at 06:00:00, its first pass since the start, and again at 06:30:00 (30m0s later)"},
		{"a catch-up, and the next slot", 7, time.Time{},
			"US: passed at 2026-10-25T06:15:00Z, its first pass since the start, and again at 07:00:00 (45m0s later)"},
		{"a catch-up for the slot the downtime missed, and the next slot", 7, at(5),
			"US: passed at 2026-10-25T06:15:00Z, its first pass since the start, and again at 07:00:00 (45m0s later)"},
	} {
		passes := append(append(hourly(6, 1), 6.25, c.second), hourly(24, 1)[int(c.second)+1:]...)
		h := history(passes, hourly(24, 60), 1)
		h.Starts, h.Skews, h.Down = append(h.Starts, down.To), []Interval{skew}, []Interval{down}
		for i := range h.Runs {
			if h.Runs[i].Started.Equal(at(6.25)) {
				h.Runs[i].Slot = c.slot
			}
		}
		f := Check(h)
		switch {
		case c.want == "" && len(f) != 0:
			t.Errorf("%s: got %q, want nothing", c.name, f)
		case c.want != "" && (len(f) != 1 || !strings.Contains(f[0], c.want)):
			t.Errorf("%s: got %q, want %q", c.name, f, c.want)
		}
	}
}

// TestCheckReadsTheSecondProcesssRunAsNoSecondPass: a `run --once` of
// the chart by the second process half an hour after the daemon's pass
// at its start is no second pass of the daemon's; the same pass with no
// second process is.
func TestCheckReadsTheSecondProcesssRunAsNoSecondPass(t *testing.T) {
	passes := append([]float64{0, 0.5}, hourly(24, 1)[1:]...)
	h := history(passes, hourly(24, 60), 1)
	once := Interval{t0.Add(29 * time.Minute), t0.Add(31 * time.Minute)}
	h.Joins = []Join{{Interval{t0.Add(20 * time.Minute), t0.Add(40 * time.Minute)}, "US", []JoinRun{{once, nil}}}}
	if f := Check(h); len(f) != 0 {
		t.Errorf("the second process's run half an hour on: %q, want nothing", f)
	}
	h.Joins = nil
	if f := Check(h); len(f) != 1 || !strings.Contains(f[0], "US: passed at 2026-10-25T00:00:00Z, its first pass since the start, and again at 00:30:00") {
		t.Errorf("the daemon's own pass half an hour on: %q", f)
	}
}

func TestCheckFindsTrackingAtHalfItsPlan(t *testing.T) {
	f := Check(history(hourly(24, 1), hourly(12, 120), 1))
	if len(f) != 1 || !strings.Contains(f[0], "tracking: 12 of 12 passes were followed by a missed slot") {
		t.Errorf("got %q", f)
	}
}

func TestCheckFindsNothingExercised(t *testing.T) {
	f := Check(history(nil, nil, 1))
	if len(f) != 3 || !strings.Contains(f[0], "never called") {
		t.Errorf("got %q", f)
	}
	h := history(hourly(24, 1), hourly(24, 60), 1)
	h.Exhaust = true
	if f := Check(h); len(f) != 1 || !strings.Contains(f[0], "the limit was never reached") {
		t.Errorf("a workload meant to exhaust the pool that spent 24 units: %q", f)
	}
}

func TestCheckFindsHousekeepingMissedTwiceOrFailed(t *testing.T) {
	skipped := history(hourly(24, 1), hourly(24, 60), 1)
	var kept []Pass
	for _, p := range skipped.Passes {
		if p.Entry != "prune" || p.Slot.Hour() != 7 {
			kept = append(kept, p)
		}
	}
	skipped.Passes = kept
	if f := Check(skipped); len(f) != 1 || !strings.Contains(f[0], "prune: no pass from 2026-10-25T06:54:22Z to 2026-10-25T08:54:22Z") {
		t.Errorf("the prune skipped its 7:54 slot: %q", f)
	}
	twice := history(hourly(24, 1), hourly(24, 60), 1)
	again := twice.Passes[4]
	again.Started = again.Started.Add(time.Minute)
	twice.Passes = append(twice.Passes, again)
	if f := Check(twice); len(f) != 1 || !strings.Contains(f[0], "refresh: ran 2 times for its slot 2026-10-25T02:03:00Z") {
		t.Errorf("the refresh ran twice for its 2:03 slot: %q", f)
	}
	caught := history(hourly(24, 1), hourly(24, 60), 1)
	kept = nil
	for _, p := range caught.Passes { // the refresh's 7:03 slot replaced by a catch-up at 6:09, its 7:03 slot declined
		switch {
		case p.Entry == "refresh" && p.Slot.Hour() == 6:
			p.Started, p.Slot = t0.Add(6*time.Hour+9*time.Minute), time.Time{}
		case p.Entry == "refresh" && p.Slot.Hour() == 7:
			continue
		}
		kept = append(kept, p)
	}
	caught.Passes = kept
	if f := Check(caught); len(f) != 0 {
		t.Errorf("a catch-up at 6:09 standing for the 7:03 slot: %q", f)
	}
	for i, p := range caught.Passes {
		if p.Slot.IsZero() {
			caught.Passes[i].Slot = p.Started // the same pass, credited to a slot of its own
		}
	}
	if f := Check(caught); len(f) != 1 || !strings.Contains(f[0], "refresh: no pass from 2026-10-25T06:09:00Z to 2026-10-25T08:03:00Z") {
		t.Errorf("a pass at 6:09 for a slot of its own, none at 7:03: %q", f)
	}
	failed := history(hourly(24, 1), hourly(24, 60), 1)
	failed.Passes[1].Status = "failed"
	if f := Check(failed); len(f) != 1 || !strings.Contains(f[0], "prune: 1 passes failed with the upstream answering") {
		t.Errorf("a prune failed: %q", f)
	}
	failed.Passes[1].Status = "completed"
	failed.Passes[0].Status = "failed"
	failed.Faults = []Fault{{At: t0, Calls: 2}}
	if f := Check(failed); len(f) != 0 {
		t.Errorf("a refresh failed while the upstream failed: %q", f)
	}
}

func TestCheckFindsAStaleChartServed(t *testing.T) {
	reading := func(served ...Served) *History {
		h := history(hourly(24, 1), hourly(24, 60), 1)
		h.Readers = true
		for i := range h.Runs {
			h.Runs[i].ID = int64(i + 1)
			h.Runs[i].Finished = h.Runs[i].Started.Add(time.Minute)
		}
		h.Served = served
		return h
	}
	at := func(hr, min float64) time.Time {
		return t0.Add(time.Duration(hr*float64(time.Hour) + min*float64(time.Minute)))
	}
	fresh := Served{At: at(5, 30), Region: "US", RunID: 6, RunAt: "x", PageAt: "x"} // run 6 started 5:00, landed 5:01
	if f := Check(reading(fresh, Served{At: at(5, 1), Region: "US", RunID: 5, RunAt: "y", PageAt: "y"})); len(f) != 0 {
		t.Errorf("fresh answers, one a second after run 6 landed: %q", f)
	}
	stale := fresh
	stale.RunID = 5
	if f := Check(reading(stale)); len(f) != 1 || !strings.Contains(f[0], "readers: 1 of 1 answers were a chart older than the last run landed 1.5s before") ||
		!strings.Contains(f[0], "US's run 5, though run 6 landed at 05:01:00") {
		t.Errorf("run 5 served half an hour after run 6 landed: %q", f)
	}
	page := fresh
	page.PageAt = "z"
	if f := Check(reading(page)); len(f) != 1 || !strings.Contains(f[0], `page said its views were fetched at "z", its JSON at "x"`) {
		t.Errorf("a page that disagrees with its JSON: %q", f)
	}
	failed := Served{At: at(5, 30), Region: "US", Err: "/charts/US: 503 Service Unavailable"}
	if f := Check(reading(fresh, failed)); len(f) != 1 || !strings.Contains(f[0], "503") {
		t.Errorf("a read failed, the process up: %q", f)
	}
	failed.Down = true
	if f := Check(reading(fresh, failed)); len(f) != 0 {
		t.Errorf("a read failed, the process down: %q", f)
	}
	if f := Check(reading(Served{At: at(0, 0), Region: "US"})); len(f) != 1 || !strings.Contains(f[0], "freshness was not checked") {
		t.Errorf("read before any chart landed: %q", f)
	}
}

func TestCheckFindsCallsDuringABlock(t *testing.T) {
	refused := func(calls ...float64) *History { // minutes after 10:00 UTC (3:00 in Los Angeles)
		h := history(hourly(10, 1), hourly(10, 60), 1) // the day ends at 10:00: nothing after it but these
		h.Refusals = []Interval{{t0.Add(10 * time.Hour), t0.Add(10*time.Hour + 30*time.Minute)}}
		for i, m := range calls {
			status := http.StatusOK
			if i == 0 {
				status = http.StatusForbidden
			}
			at := t0.Add(10*time.Hour + time.Duration(m*float64(time.Minute)))
			h.Calls = append(h.Calls, Call{At: at, Status: status, Charged: map[string]int64{"default": int64(20 + i)}})
			h.Ledger = append(h.Ledger, Entry{Pool: "default", Units: []int64{10, 1}[i], At: at}) // up to 10, then 20, 21
		}
		return h
	}
	if f := Check(refused(1, 1.0/120)); len(f) != 0 {
		t.Errorf("a refusal and a call in flight with it: %q", f)
	}
	if f := Check(refused(1, 45)); len(f) != 1 || !strings.Contains(f[0], "refused at 2026-10-25T10:01:00Z, called again at 10:45:00, before the pool's reset at 2026-10-26T07:00:00Z") {
		t.Errorf("a call a quarter of an hour after the refusal ended, the pool not reset: %q", f)
	}
	skewed := history(hourly(10, 1), hourly(10, 60), 1)
	skewed.Skews = []Interval{{t0.Add(10 * time.Hour), t0.Add(10*time.Hour + skewFor)}}
	skewed.End = t0.Add(10*time.Hour + 30*time.Minute)
	for _, m := range []float64{2, 9} {
		skewed.Calls = append(skewed.Calls, Call{At: t0.Add(10*time.Hour + time.Duration(m*float64(time.Minute))), Status: http.StatusOK,
			Charged: map[string]int64{"default": 20}})
	}
	skewed.Ledger = append(skewed.Ledger, Entry{Pool: "default", Units: 10, At: skewed.Calls[len(skewed.Calls)-2].At}) // up to 10, then 20
	if f := Check(skewed); len(f) != 1 || !strings.Contains(f[0], "the daemon made 2 calls") {
		t.Errorf("two calls while the Date was wrong: %q", f)
	}
	skewed.Calls = skewed.Calls[:len(skewed.Calls)-1]
	if f := Check(skewed); len(f) != 0 {
		t.Errorf("one call while the Date was wrong: %q", f)
	}
}

func TestCheckFindsThePlanToldTwiceOrOtherwise(t *testing.T) {
	told := func(log string, plans ...PlanRead) []string {
		h := history(hourly(24, 1), hourly(24, 60), 1)
		h.Log = filepath.Join(t.TempDir(), "daemon.log")
		if err := os.WriteFile(h.Log, []byte(log), 0o644); err != nil {
			t.Fatal(err)
		}
		h.Plans = plans
		return Check(h)
	}
	const once = `time=2026-10-25T00:00:00.000Z level=INFO msg=plan pool=default regions=8 pages_per_cycle=32 cycles_per_day=24 tracked_videos=1600 tracking_units_per_day=0 units_per_day=776 capacity=9500 fits=true
time=2026-10-25T00:00:00.000Z level=INFO msg="plan tier" tier=1 regions=8 every=1h cadence=1h depth=200 units_per_day=768 dropped=none
time=2026-10-25T00:00:00.000Z level=INFO msg=scheduled region=US kind=chart first_slot=2026-10-25T01:00:00Z
time=2026-10-25T00:00:00.000Z level=INFO msg=scheduled job=track kind=tracking first_slot=2026-10-25T00:56:15Z
`
	read := PlanRead{At: t0.Add(time.Hour), Units: map[string]int64{"default": 776}}
	if f := told(once, read); len(f) != 0 {
		t.Errorf("the plan told once, read the same: %q", f)
	}
	twice := once + `time=2026-10-25T00:00:01.000Z level=INFO msg=plan pool=default regions=110 pages_per_cycle=330 cycles_per_day=24 tracked_videos=1600 tracking_units_per_day=0 units_per_day=126720 capacity=9500 fits=false
time=2026-10-25T00:00:01.000Z level=INFO msg=scheduled job=track kind=tracking first_slot=2026-10-25T00:56:15Z
`
	if f := told(twice, read); len(f) != 3 || !strings.Contains(strings.Join(f, "\n"), "told pool default's plan 2 times: [776 126720]") ||
		!strings.Contains(strings.Join(f, "\n"), "scheduled job=track 2 times") || !strings.Contains(strings.Join(f, "\n"), "where the log told 126720") {
		t.Errorf("the plan told twice, tracking scheduled twice: %q", f)
	}
	read.Units["default"] = 770
	if f := told(once, read); len(f) != 1 || !strings.Contains(f[0], "/quota planned pool default at 770 units a day, where the log told 776") {
		t.Errorf("/quota's plan not the log's: %q", f)
	}
	if f := told(""); len(f) != 2 || !strings.Contains(f[0], "told no plan") || !strings.Contains(f[1], "told no cadence of tier 1") {
		t.Errorf("no plan told: %q", f)
	}
}

func TestCheckFindsAChargedCallNotInTheLedger(t *testing.T) {
	h := history(hourly(24, 1), hourly(24, 60), 1)
	h.Ledger = append(h.Ledger[:3:3], h.Ledger[4:]...)
	if f := Check(h); len(f) != 1 || !strings.Contains(f[0], "1 of 48 calls the upstream charged are not in the ledger as spent: default videos at 2026-10-25T03:00:00Z") {
		t.Errorf("a charged call with no ledger row: %q", f)
	}
	h = history(hourly(24, 1), hourly(24, 60), 1)
	h.Ledger[5].GivenBack = true
	if f := Check(h); len(f) != 1 || !strings.Contains(f[0], "default videos at 2026-10-25T05:00:00Z") {
		t.Errorf("a charged call given back: %q", f)
	}
	h = history(hourly(24, 1), hourly(24, 60), 1)
	h.Ledger[7].At = h.Ledger[7].At.Add(-time.Minute)
	if f := Check(h); len(f) != 1 || !strings.Contains(f[0], "default videos at 2026-10-25T07:00:00Z") {
		t.Errorf("a charged call admitted a minute before, past its delivery bound: %q", f)
	}
	h = history(hourly(24, 1), hourly(24, 60), 1)
	h.Ledger[7].At = h.Ledger[7].At.Add(-10 * time.Second)
	if f := Check(h); len(f) != 0 {
		t.Errorf("a call admitted 10 s before the upstream charged it: %q", f)
	}
	h = history(hourly(24, 1), hourly(24, 60), 1)
	h.Ledger[7].At = h.Ledger[7].At.Add(time.Millisecond)
	if f := Check(h); len(f) != 0 {
		t.Errorf("a call stamped in the millisecond after an unmetered one, as Redis stamps it: %q", f)
	}
	h = history(hourly(24, 1), hourly(24, 60), 1)
	h.Ledger[7].At = h.Ledger[7].At.Add(2 * time.Millisecond)
	if f := Check(h); len(f) != 1 || !strings.Contains(f[0], "default videos at 2026-10-25T07:00:00Z") {
		t.Errorf("a call stamped two milliseconds after the upstream charged it: %q", f)
	}
}

func TestCheckFindsThePageInFlightLostAtSIGTERM(t *testing.T) {
	h := history(hourly(24, 1), hourly(24, 60), 1)
	held := Held{At: t0.Add(5 * time.Hour), Region: "US", First: "v1"}
	h.Terms = []Term{{At: held.At, Stopped: held.At.Add(5 * time.Second), Held: held, Hold: 5 * time.Second, Stored: true},
		{At: held.At, Stopped: held.At.Add(20 * time.Second), Held: held, Hold: time.Minute}}
	if f := Check(h); len(f) != 0 {
		t.Errorf("the page stored, and one held past its bound not: %q", f)
	}
	h.Terms[0].Stored = false
	if f := Check(h); len(f) != 1 || !strings.Contains(f[0], "SIGTERM at 2026-10-25T05:00:00Z met chart US's page on the wire, answered 5s later within its bound, and the page was not stored") {
		t.Errorf("the page in flight lost: %q", f)
	}
	h.Terms[0].Stored = true
	h.Terms[0].At, h.Terms[0].Stopped = held.At.Add(-time.Minute), held.At.Add(time.Minute)
	if f := Check(h); len(f) != 1 || !strings.Contains(f[0], "SIGTERM at 2026-10-25T04:59:00Z: 2 calls reached the upstream after it, before the daemon stopped at 05:01:00") {
		t.Errorf("a call after the signal: %q", f)
	}
}

func TestCheckFindsASecondProcessThatFailedOrRanNothing(t *testing.T) {
	h := history(hourly(24, 1), hourly(24, 60), 1)
	at := func(hr, min int) Interval {
		from := t0.Add(time.Duration(hr)*time.Hour + time.Duration(min)*time.Minute)
		return Interval{from, from.Add(time.Minute)}
	}
	join := Join{Interval{t0.Add(5 * time.Hour), t0.Add(7 * time.Hour)}, "BR",
		[]JoinRun{{at(5, 0), nil}, {at(6, 0), fmt.Errorf("stopped: %w", ingest.ErrQuotaExhausted)}}}
	h.Joins = []Join{join}
	h.Runs = append(h.Runs, Run{Region: "BR", Status: "stopped", Started: t0.Add(6 * time.Hour)})
	if f := Check(h); len(f) != 0 {
		t.Errorf("a run and a refusal beside the daemon: %q", f)
	}
	h.Joins[0].Runs = append(slices.Clone(join.Runs), JoinRun{at(6, 30), errors.New("another daemon already runs on this database")})
	if f := Check(h); len(f) != 1 || !strings.Contains(f[0], "run --once of BR beside the daemon from 2026-10-25T05:00:00Z: 1 of 3 runs failed outside the upstream's failures, the first: another daemon already runs") {
		t.Errorf("a run beside the daemon refused: %q", f)
	}
	// The upstream failing the run's calls, while the daemon backs off the
	// same failures: excused inside the spell, red outside it.
	gaveUp := errors.New("videoCategories.list: gave up after 4 attempts: HTTP 503")
	h.Faults = []Fault{{At: t0.Add(6*time.Hour + 20*time.Minute), Calls: 1}}
	h.Joins[0].Runs = append(slices.Clone(join.Runs), JoinRun{Interval{t0.Add(6*time.Hour + 15*time.Minute), t0.Add(6*time.Hour + 25*time.Minute)}, gaveUp})
	if f := Check(h); len(f) != 0 {
		t.Errorf("a run that failed inside the upstream's failures: %q", f)
	}
	h.Joins[0].Runs = append(slices.Clone(join.Runs), JoinRun{at(7, 30), gaveUp})
	if f := Check(h); len(f) != 1 || !strings.Contains(f[0], "1 of 3 runs failed outside the upstream's failures, the first: videoCategories.list: gave up") {
		t.Errorf("a run that failed after the upstream's failures ended: %q", f)
	}
	h.Faults = nil
	h.Joins[0].Runs = join.Runs
	h.Runs = h.Runs[:len(h.Runs)-1]
	if f := Check(h); len(f) != 1 || !strings.Contains(f[0], "from 2026-10-25T05:00:00Z to 07:00:00: no run in the database") {
		t.Errorf("no run beside the daemon: %q", f)
	}
}

func TestCheckFindsAFullDiskNotSaid(t *testing.T) {
	h := history(hourly(24, 1), hourly(24, 60), 1)
	h.Fulls = []Interval{{t0.Add(5 * time.Hour), t0.Add(6 * time.Hour)}}
	h.Log = filepath.Join(t.TempDir(), "daemon.log")
	write := func(err string) {
		line := `time=2026-10-25T05:22:30.000Z level=INFO msg=plan pool=default regions=1 units_per_day=24 capacity=9500 fits=true` + "\n" +
			`time=2026-10-25T05:30:00.000Z level=ERROR msg=pass region=US status=failed pages=0 videos=0 units=2 duration=0s err="` + err + `"` + "\n"
		if err := os.WriteFile(h.Log, []byte(line), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("store page 1: save US page 1 of run 41: ingest.db: the disk is full: SQLite could not write (52.4 GiB free in /tmp)")
	if f := checkFulls(h); len(f) != 0 {
		t.Errorf("a pass failed naming the full disk: %q", f)
	}
	write("store page 1: save US page 1 of run 41: database or disk is full (13)")
	if f := checkFulls(h); len(f) != 1 || !strings.Contains(f[0], "1 chart passes failed while the disk was full without saying so: US at 2026-10-25T05:30:00Z") {
		t.Errorf("a pass failed on the full disk without saying so: %q", f)
	}
	h.Fulls[0].From = t0.Add(5*time.Hour + 45*time.Minute)
	if f := checkFulls(h); len(f) != 0 {
		t.Errorf("a pass failed before the disk was full: %q", f)
	}
}

// Past the prune's cut, an entry with no pass kept has one gap, from the
// cut to the end: the prune's is red; the refresh's is excused where the
// configured charts want more of the default pool than it holds, as any
// gap of the refresh is there.
func TestCheckReadsNoPassKeptAsAGapFromTheCut(t *testing.T) {
	h := history(hourly(24, 1), hourly(24, 60), 1)
	h.End = t0.Add(40 * 24 * time.Hour)
	h.Passes = nil
	var refresh, prune []time.Time
	gaps := func() (string, string) {
		return housekeepingGaps(h, "refresh", refresh, nil), housekeepingGaps(h, "prune", prune, nil)
	}
	if r, p := gaps(); !strings.Contains(r, "refresh: no pass from") || !strings.Contains(p, "prune: no pass from") {
		t.Errorf("no pass kept in 40 days on a pool that holds the charts: refresh %q, prune %q", r, p)
	}
	h.Charts = regions.Charts(regions.Default...)
	h.Costs = scarce(t).Costs
	if !h.scarce() {
		t.Fatal("the rig: the default regions hourly are not scarce on the scarce pool")
	}
	if r, p := gaps(); r != "" || !strings.Contains(p, "prune: no pass from") {
		t.Errorf("no pass kept in 40 days on a scarce pool: refresh %q (want none), prune %q (want red)", r, p)
	}
}

// poolCosts is a default pool of limit units a window (no reserve), its day
// UTC's, and the operations a page a call.
func poolCosts(t *testing.T, limit int, window string) *ingest.Costs {
	t.Helper()
	c, err := costs.Load("test.yaml", []byte(fmt.Sprintf(`pools:
  default: {limit: %d, reserve: 0, window: %s, day: UTC}
  search:  {limit: 100, reserve: 0, window: 24h, day: UTC}
  stats:   {limit: 10000, reserve: 0, window: 24h, day: UTC}
operations:
  videos.list:          {default: 1}
  videoCategories.list: {default: 1}
  i18nRegions.list:     {default: 1}
  search.list:          {search: 1}
  videos.batchGetStats: {stats: 1}
`, limit, window)))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// tieredHistory is a day of US (tier 1, four pages) and JP (tier 3, a
// page, every three hours) at --every 1h and --max-stale 3h on a default
// pool of 82 units a day: the pool holds JP at its cadence, its 2 units
// of category names and US every 1h20m (96 units a day at 1h, 72 left),
// the refresh dropped, the log told log, US passed at the given hours.
func tieredHistory(t *testing.T, us []float64, log string) *History {
	t.Helper()
	h := &History{Config: Config{Shape: Shape{Every: time.Hour, MaxStale: 3 * time.Hour, Costs: poolCosts(t, 82, "24h")}, Start: t0, Days: 1},
		End: t0.Add(24 * time.Hour), Starts: []time.Time{t0},
		Charts: []regions.Chart{{Code: "US", Tier: 1, Depth: 200}, {Code: "JP", Tier: 3, Depth: 50}}}
	type pass struct {
		region string
		at     time.Time
		pages  int
	}
	var all []pass
	for _, hr := range us {
		all = append(all, pass{"US", t0.Add(time.Duration(hr * float64(time.Hour))), 4})
	}
	for _, hr := range hourly(8, 3) {
		all = append(all, pass{"JP", t0.Add(time.Duration(hr*float64(time.Hour)) + time.Minute), 1})
	}
	slices.SortFunc(all, func(a, b pass) int { return a.at.Compare(b.at) })
	var charged int64
	for _, p := range all {
		h.Runs = append(h.Runs, Run{Region: p.region, Status: "completed", Started: p.at, Pages: p.pages})
		for range p.pages {
			charged++
			h.Calls = append(h.Calls, Call{At: p.at, Path: "/youtube/v3/videos", Charged: map[string]int64{"default": charged}})
		}
		h.Ledger = append(h.Ledger, Entry{Pool: "default", Units: int64(p.pages), At: p.at})
	}
	for _, p := range housekeepingPasses() {
		if p.Entry != "refresh" { // a lower level of the short pool: dropped
			h.Passes = append(h.Passes, p)
		}
	}
	if log != "" {
		h.Log = filepath.Join(t.TempDir(), "daemon.log")
		if err := os.WriteFile(h.Log, []byte(log), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return h
}

// On a pool that holds the lower tiers at --max-stale and the highest
// tier only stretched, the highest tier's charts pass no further apart
// than the cadence the pool holds it at, a slot and a step: a gap of
// three hours under a cadence of 1h20m is found, though --max-stale
// would let it be.
func TestCheckHoldsTheHighestTierToTheCadenceThePoolHolds(t *testing.T) {
	// a pass at two slots of every three: 1h20m on hourly slots
	var even []float64
	for hr := 0; hr < 24; hr++ {
		if hr%3 != 2 {
			even = append(even, float64(hr))
		}
	}
	if f := Check(tieredHistory(t, even, "")); len(f) != 0 {
		t.Errorf("US every 1h20m on hourly slots: %q", f)
	}
	gap := slices.DeleteFunc(slices.Clone(even), func(hr float64) bool { return hr == 9 || hr == 10 }) // 7h to 12h
	f := Check(tieredHistory(t, gap, ""))
	if len(f) != 1 || !strings.Contains(f[0], "US: no pass from 2026-10-25T07:00:00Z to 2026-10-25T12:00:00Z") ||
		!strings.Contains(f[0], "tier 1 held every 1h20m0s by the pool") {
		t.Errorf("US 5 h without a pass under a cadence of 1h20m: %q", f)
	}
	three := slices.DeleteFunc(slices.Clone(even), func(hr float64) bool { return hr == 9 }) // 7h to 10h
	if f := Check(tieredHistory(t, three, "")); len(f) != 1 || !strings.Contains(f[0], "US: no pass from 2026-10-25T07:00:00Z to 2026-10-25T10:00:00Z (3h0m0s)") {
		t.Errorf("US 3 h without a pass under a cadence of 1h20m, within --max-stale: %q", f)
	}
}

// The log tells the highest tier's cadence at start: never slower than
// the pool holds it beside the lower tiers at --max-stale, and in the
// first life (nothing measured yet) never faster than that either.
func TestCheckFindsTheHighestTierToldSlowerOrFasterThanThePoolHolds(t *testing.T) {
	var even []float64
	for hr := 0; hr < 24; hr++ {
		if hr%3 != 2 {
			even = append(even, float64(hr))
		}
	}
	line := func(every string) string {
		return `time=2026-10-25T00:00:00.000Z level=INFO msg="plan tier" tier=1 regions=1 every=` + every + ` cadence=1h depth=200 units_per_day=72 dropped=none
time=2026-10-25T00:00:00.000Z level=INFO msg="plan tier" tier=3 regions=1 every=3h cadence=3h depth=50 units_per_day=8 dropped=none
`
	}
	for _, c := range []struct{ name, log, want string }{
		{"told as the pool holds it", line("1h20m0.5s"), ""},
		{"told slower", line("1h40m"), "told tier 1 every 1h40m0s, where the pool holds it every 1h20m0s beside the lower tiers at --max-stale 3h0m0s"},
		{"told at its cadence", line("1h"), "told tier 1 every 1h0m0s, where the pool holds it every 1h20m0s at best: the plan did not say the tier it cannot hold"},
		{"dropped", line("never"), "told tier 1 every"},
		{"not told", `time=2026-10-25T00:00:00.000Z level=INFO msg=plan pool=default regions=2 units_per_day=106 capacity=82 fits=false
`, "told no cadence of tier 1"},
	} {
		var tier []string
		for _, f := range Check(tieredHistory(t, even, c.log)) {
			if strings.Contains(f, "tier") {
				tier = append(tier, f)
			}
		}
		switch {
		case c.want == "" && len(tier) != 0:
			t.Errorf("%s: got %q, want nothing", c.name, tier)
		case c.want != "" && (len(tier) != 1 || !strings.Contains(tier[0], c.want)):
			t.Errorf("%s: got %q, want %q", c.name, tier, c.want)
		}
	}
}

// A chart declined at its slot for want of room asks again as the window
// frees room: room freed within the slot, not taken by a call at once,
// and no pass of the chart before its next slot is found.
func TestCheckFindsASlotDeclinedForRoomNotAskedAgain(t *testing.T) {
	// a default pool of 2 units a half hour; US a page a pass, hourly
	// but at 4h; two calls of another chart at 3:40 and 3:50 fill the
	// window at US's slot of 4h, and 3:40's leaves it at 4:10
	room := func(more ...float64) []string {
		h := history(append(append(hourly(4, 1), more...), hourly(24, 1)[5:]...), nil, 1)
		h.Costs, h.TrackFor = withoutDay(poolCosts(t, 2, "30m")), 0
		for i := range h.Runs {
			h.Runs[i].Pages = 1
		}
		for _, m := range []float64{220, 230} {
			at := t0.Add(time.Duration(m * float64(time.Minute)))
			h.Calls = append(h.Calls, Call{At: at, Path: "/youtube/v3/videos"})
			h.Ledger = append(h.Ledger, Entry{Pool: "default", Units: 1, At: at})
		}
		slices.SortFunc(h.Calls, func(a, b Call) int { return a.At.Compare(b.At) })
		for i := range h.Calls {
			h.Calls[i].Charged = map[string]int64{"default": int64(i + 1)}
		}
		h.Log = filepath.Join(t.TempDir(), "daemon.log")
		log := `time=2026-10-25T04:00:00.000Z level=INFO msg="pace: slot declined" entry=US slot=2026-10-25T04:00:00Z reason="no room" last_pass_ago=1h0m0s next=2026-10-25T05:00:00Z
`
		if err := os.WriteFile(h.Log, []byte(log), 0o644); err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, f := range Check(h) {
			if strings.Contains(f, "declined for room") {
				out = append(out, f)
			}
		}
		return out
	}
	if f := room(); len(f) != 1 || !strings.Contains(f[0], "US declined at its slot 2026-10-25T04:00:00Z for room, the pool had room for its 1 pages from 04:10:00") {
		t.Errorf("the room freed at 4:10, untaken to the next slot: %q", f)
	}
	if f := room(4.17); len(f) != 0 {
		t.Errorf("US asked again and passed at 4:10:12: %q", f)
	}
}

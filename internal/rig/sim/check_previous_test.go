package sim

import (
	"strings"
	"testing"
	"time"
)

// previousHistory is three runs of the US chart, the third served to a
// reader against the second, and against the first as its run a day
// before: a01 climbed from 2 to 1, a02 fell, a03 is new, a04 left.
func previousHistory() *History {
	h := history(nil, nil, 1)
	h.Readers = true
	for i, after := range []time.Duration{0, 25 * time.Hour, 26 * time.Hour} {
		at := t0.Add(after)
		h.Runs = append(h.Runs, Run{ID: int64(i + 1), Region: "US", Status: "completed", Started: at, Finished: at.Add(time.Minute), Pages: 1})
	}
	stamp := func(d time.Duration) string { return t0.Add(d).UTC().Format(time.RFC3339) }
	h.Served = []Served{{At: t0.Add(26*time.Hour + 5*time.Minute), Region: "US", RunID: 3,
		PrevRunID: 2, PrevAt: stamp(25 * time.Hour), DayRunID: 1, DayAt: stamp(0), Status: "completed", Complete: true,
		Entries: []Shown{{Rank: 1, ID: "a01", Prev: 2}, {Rank: 2, ID: "a02", Prev: 1}, {Rank: 3, ID: "a03"}}}}
	h.Ranked = map[int64][]Shown{
		2: {{Rank: 1, ID: "a02"}, {Rank: 2, ID: "a01"}, {Rank: 3, ID: "a04"}},
		3: {{Rank: 1, ID: "a01"}, {Rank: 2, ID: "a02"}, {Rank: 3, ID: "a03"}},
	}
	return h
}

func TestCheckFindsAChartServedAgainstAnotherRun(t *testing.T) {
	if f := checkPreviousRanks(previousHistory()); len(f) != 0 {
		t.Fatalf("the chart served against its previous run: %q", f)
	}
	gone := previousHistory()
	gone.Served[0].Entries[0].Prev = 0
	gone.Tombstones = map[string]time.Time{"a01": t0.Add(3 * time.Hour)}
	if f := checkPreviousRanks(gone); len(f) != 0 {
		t.Errorf("a video deleted since leaves what it held unread: %q", f)
	}
	cases := []struct {
		name string
		edit func(h *History)
		want string
	}{
		{"the previous ranks left out", func(h *History) {
			for i := range h.Served[0].Entries {
				h.Served[0].Entries[i].Prev = 0
			}
		}, "a01 at 1 with previous rank 0, where run 2 ranks it 2"},
		{"the ranks read as each other's", func(h *History) {
			h.Served[0].Entries[0].Prev, h.Served[0].Entries[1].Prev = 1, 2
		}, "a01 at 1 with previous rank 1, where run 2 ranks it 2"},
		{"a new video given a rank", func(h *History) { h.Served[0].Entries[2].Prev = 3 }, "a03 at 3 with previous rank 3, where run 2 ranks it 0"},
		{"the run itself named", func(h *History) { h.Served[0].PrevRunID = 3 }, "named run 3, not before it, its previous"},
		{"an older run named", func(h *History) { h.Served[0].PrevRunID = 1 }, "named run 1 its previous, where run 2 had finished before"},
		{"none named", func(h *History) { h.Served[0].PrevRunID = 0 }, "named run 0 its previous, where run 2 had finished before"},
		{"the next the run itself", func(h *History) { h.Served[0].NextRunID = 3 }, "named run 3, not after it, its next"},
		{"the day before the run itself", func(h *History) { h.Served[0].DayRunID = 3 }, "named run 3, not before it, its run a day before"},
		{"the previous named the day before", func(h *History) { h.Served[0].DayRunID, h.Served[0].DayAt = 2, h.Served[0].PrevAt }, "named run 2, started at 2026-10-26T01:00:00Z, its run a day before"},
		{"a completed run said incomplete", func(h *History) { h.Served[0].Complete = false }, "said its run completed (complete false), where the database has it completed"},
		{"a failed run said complete", func(h *History) { h.Runs[2].Status = "failed" }, "said its run completed (complete true), where the database has it failed"},
		{"no day before named", func(h *History) { h.Served[0].DayRunID = 0 }, "named run 0 its run a day before, where run 1 started by"},
		{"the previous said to start at the run's time", func(h *History) { h.Served[0].PrevAt = h.Served[0].DayAt }, "said its previous, run 2, started at"},
		{"the day before said to start at the previous's", func(h *History) { h.Served[0].DayAt = h.Served[0].PrevAt }, "said its run a day before, run 1, started at"},
	}
	for _, c := range cases {
		h := previousHistory()
		c.edit(h)
		if f := checkPreviousRanks(h); len(f) != 1 || !strings.Contains(f[0], c.want) {
			t.Errorf("%s: %q, want %q", c.name, f, c.want)
		}
	}
	// a run still running at the read, or one that stored nothing, is no
	// chart's previous
	running := previousHistory()
	running.Runs[1].Finished = running.Served[0].At.Add(time.Minute)
	running.Served[0].PrevRunID, running.Served[0].PrevAt = 1, running.Served[0].DayAt
	running.Served[0].Entries = []Shown{{Rank: 1, ID: "a01"}}
	running.Ranked[1] = []Shown{{Rank: 1, ID: "a09"}}
	if f := checkPreviousRanks(running); len(f) != 0 {
		t.Errorf("a run finished after the read: %q", f)
	}
	none := previousHistory()
	none.Served[0].PrevRunID, none.Served[0].DayRunID = 0, 0
	none.Runs = none.Runs[2:]
	if f := checkPreviousRanks(none); len(f) != 1 || !strings.Contains(f[0], "none naming a previous run") {
		t.Errorf("a chart with no previous run checked nothing: %q", f)
	}
}

package sim

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"
)

// rankedHistory is one pass of the US chart in two pages of 50, the
// second asked again after a 503, the chart served to a reader and
// stored as the upstream ranked it.
func rankedHistory() *History {
	h := history(nil, nil, 1)
	h.Readers = true
	h.Runs = []Run{{ID: 1, Region: "US", Status: "completed", Started: t0, Finished: t0.Add(time.Minute)}}
	var first, second []string
	for i := range 50 {
		first, second = append(first, fmt.Sprintf("a%02d", i)), append(second, fmt.Sprintf("b%02d", i))
	}
	h.Calls = []Call{
		{At: t0.Add(10 * time.Second), Kind: KindChart, Status: http.StatusOK, Region: "US", IDs: first},
		{At: t0.Add(20 * time.Second), Kind: KindChart, Status: http.StatusServiceUnavailable, Region: "US", Page: "p2"},
		{At: t0.Add(30 * time.Second), Kind: KindChart, Status: http.StatusOK, Region: "US", Page: "p2", IDs: second},
	}
	var entries []Shown
	for i, id := range append(first, second...) {
		entries = append(entries, Shown{Rank: i + 1, ID: id})
	}
	h.Served = []Served{{At: t0.Add(2 * time.Minute), Region: "US", RunID: 1, Entries: entries}}
	h.Ranked = map[int64][]Shown{1: append([]Shown(nil), entries...)}
	return h
}

func TestCheckFindsARankOtherThanTheUpstreamsPlace(t *testing.T) {
	if f := checkRanks(rankedHistory()); len(f) != 0 {
		t.Fatalf("the chart served and stored as the upstream ranked it: %q", f)
	}
	gap := rankedHistory()
	gap.Served[0].Entries = append(gap.Served[0].Entries[:2], gap.Served[0].Entries[3:]...)
	gap.Ranked[1] = gap.Served[0].Entries
	if f := checkRanks(gap); len(f) != 0 {
		t.Errorf("a video deleted since leaves a gap: %q", f)
	}
	moved := rankedHistory()
	moved.Calls[2].IDs = append([]string{"a49"}, moved.Calls[2].IDs[1:]...)
	moved.Served[0].Entries = append(moved.Served[0].Entries[:49], moved.Served[0].Entries[50:]...)
	moved.Served[0].Entries[49] = Shown{Rank: 51, ID: "a49"} // the page it was met on last
	moved.Ranked[1] = moved.Served[0].Entries
	if f := checkRanks(moved); len(f) != 0 {
		t.Errorf("a video the chart moved onto the next page ranks at either place: %q", f)
	}
	// the first page counted from 51, as the second is
	for _, where := range []string{"served", "stored"} {
		h := rankedHistory()
		entries := h.Served[0].Entries
		if where == "stored" {
			entries = h.Ranked[1]
		}
		for i := range 50 {
			entries[i].Rank += 50
		}
		f := checkRanks(h)
		if len(f) != 1 || !strings.Contains(f[0], "US's run 1 "+where+" 50 of 100 entries misranked, the first a00 at rank 51, placed [1] by the upstream") {
			t.Errorf("the first page %s from 51: %q", where, f)
		}
	}
	none := rankedHistory()
	none.Calls = none.Calls[1:]
	if f := checkRanks(none); len(f) != 1 || !strings.Contains(f[0], "no rank was checked") {
		t.Errorf("a run whose first page the upstream never answered: %q", f)
	}
}

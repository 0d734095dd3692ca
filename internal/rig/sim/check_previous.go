package sim

// A chart's previous rank (docs/api.md: each entry's previous rank and
// movement are against that chart's previous run). The store computes it
// by reading a second run beside the one served, which no other rule
// reads: a chart that names the wrong run as its previous, or gives an
// entry a rank the named run does not hold, shows every reader a chart
// that moved otherwise than it did.

import (
	"fmt"
	"time"
)

// checkPreviousRanks: each chart a reader was served named as its
// previous run the newest run of that chart before it that had finished
// with videos by the read, and none when there was none; and gave each
// entry the rank its video held in that run as the database keeps it at
// the end, none when it was not there. A video deleted since, or a
// previous run the prune took, leaves what it held unread. Readers
// served charts none of which named a previous run checked nothing.
func checkPreviousRanks(h *History) []string {
	if !h.Readers {
		return nil
	}
	var wrong []string
	checked, served := 0, 0
	for _, s := range h.Served {
		if s.Down || s.Err != "" || len(s.Entries) == 0 || h.onCopy(s.At) {
			continue
		}
		r, ok := h.runOf(s.RunID)
		if !ok {
			continue
		}
		served++
		at := s.At.UTC().Format(time.RFC3339)
		if f := h.wrongPrevious(s, r); f != "" {
			checked++
			wrong = append(wrong, fmt.Sprintf("at %s %s's run %d %s", at, chartName(r.Region, r.Category), r.ID, f))
			continue
		}
		if _, ok := h.runOf(s.PrevRunID); !ok || len(h.Ranked[s.PrevRunID]) == 0 {
			continue
		}
		checked++
		if f := h.wrongPrevRanks(s); f != "" {
			wrong = append(wrong, fmt.Sprintf("at %s %s's run %d served %s", at, chartName(r.Region, r.Category), r.ID, f))
		}
	}
	var out []string
	if len(wrong) > 0 {
		out = append(out, fmt.Sprintf("previous ranks: %d charts were served against another run than their previous: %s", len(wrong), firstFew(wrong)))
	}
	if served > 0 && checked == 0 {
		out = append(out, fmt.Sprintf("previous ranks: readers were served %d charts, none naming a previous run the database kept", served))
	}
	return out
}

// wrongPrevious says how the previous run s named is not the newest run
// of r's chart before r that had finished with videos when s was read,
// "" when it is.
func (h *History) wrongPrevious(s Served, r Run) string {
	if s.PrevRunID >= r.ID {
		return fmt.Sprintf("named run %d, not before it, its previous", s.PrevRunID)
	}
	var want int64
	for _, o := range h.Runs {
		if o.Region == r.Region && o.Category == r.Category && o.ID < r.ID && o.ID > want &&
			o.Pages > 0 && !o.Finished.IsZero() && o.Finished.Before(s.At) && !h.onCopy(o.Started) {
			want = o.ID
		}
	}
	if want > s.PrevRunID {
		return fmt.Sprintf("named run %d its previous, where run %d had finished before", s.PrevRunID, want)
	}
	return ""
}

// wrongPrevRanks says the first entries of s whose previous rank is not
// the one its video holds in the run s named previous, "" when none.
func (h *History) wrongPrevRanks(s Served) string {
	held := map[string]int{}
	for _, e := range h.Ranked[s.PrevRunID] {
		held[e.ID] = e.Rank
	}
	var bad []string
	for _, e := range s.Entries {
		if _, gone := h.Tombstones[e.ID]; gone || e.Prev == held[e.ID] {
			continue
		}
		bad = append(bad, fmt.Sprintf("%s at %d with previous rank %d, where run %d ranks it %d", e.ID, e.Rank, e.Prev, s.PrevRunID, held[e.ID]))
	}
	if len(bad) == 0 {
		return ""
	}
	return firstFew(bad)
}

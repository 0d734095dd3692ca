package sim

// A chart's previous rank (docs/api.md: each entry's previous rank and
// movement are against that chart's previous run). The store computes it
// by reading other runs beside the one served, which no other rule
// reads: a chart that names the wrong run as its previous, or gives an
// entry a rank the named run does not hold, shows every reader a chart
// that moved otherwise than it did.

import (
	"fmt"
	"time"

	"github.com/ingestworks/ingest"
)

// checkPreviousRanks: each chart a reader was served named as its
// previous run the newest run of that chart before it that had finished
// with videos by the read, and none when there was none, its next and its
// run a day before as the chart's own, its run's status as the database
// keeps it and complete only when that run completed (docs/api.md); and
// gave each entry the rank its video held in that run as the database
// keeps it at the end, none when it was not there. A video deleted since,
// or a previous run the prune took, leaves what it held unread. Readers
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
		out = append(out, fmt.Sprintf("previous ranks: %d charts named their runs otherwise than the database keeps them: %s", len(wrong), firstFew(wrong)))
	}
	if served > 0 && checked == 0 {
		out = append(out, fmt.Sprintf("previous ranks: readers were served %d charts, none naming a previous run the database kept", served))
	}
	return out
}

// wrongPrevious says how the runs s named beside r are not r's chart's
// own, "" when they are: r's end as the database keeps it; its previous, the newest run of the chart
// before r that had finished with videos when s was read; its next, a
// run of the chart after r; its run a day before, the newest that had
// started a day or more before r; each said to start when it did.
func (h *History) wrongPrevious(s Served, r Run) string {
	if s.Status != string(r.Status) || s.Complete != (r.Status == ingest.StatusCompleted) {
		return fmt.Sprintf("said its run %s (complete %t), where the database has it %s", s.Status, s.Complete, r.Status)
	}
	if s.PrevRunID >= r.ID {
		return fmt.Sprintf("named run %d, not before it, its previous", s.PrevRunID)
	}
	if s.NextRunID != 0 && s.NextRunID <= r.ID {
		return fmt.Sprintf("named run %d, not after it, its next", s.NextRunID)
	}
	if s.DayRunID >= r.ID {
		return fmt.Sprintf("named run %d, not before it, its run a day before", s.DayRunID)
	}
	dayAgo := r.Started.Add(-24 * time.Hour)
	if o, ok := h.runOf(s.DayRunID); ok && o.Started.After(dayAgo) {
		return fmt.Sprintf("named run %d, started at %s, its run a day before", o.ID, o.Started.UTC().Format(time.RFC3339))
	}
	if want := h.newestOf(r, s.At, func(o Run) bool { return o.ID < r.ID }); want > s.PrevRunID {
		return fmt.Sprintf("named run %d its previous, where run %d had finished before", s.PrevRunID, want)
	}
	if want := h.newestOf(r, s.At, func(o Run) bool { return !o.Started.After(dayAgo) }); want > s.DayRunID {
		return fmt.Sprintf("named run %d its run a day before, where run %d started by %s", s.DayRunID, want, dayAgo.UTC().Format(time.RFC3339))
	}
	for _, named := range []struct {
		what, at string
		id       int64
	}{{"previous", s.PrevAt, s.PrevRunID}, {"run a day before", s.DayAt, s.DayRunID}} {
		if o, ok := h.runOf(named.id); ok && named.at != o.Started.UTC().Format(time.RFC3339) {
			return fmt.Sprintf("said its %s, run %d, started at %q, where it started at %s", named.what, named.id, named.at, o.Started.UTC().Format(time.RFC3339))
		}
	}
	return ""
}

// newestOf is the newest run of r's chart that keep holds and that had
// finished with videos by at, 0 for none.
func (h *History) newestOf(r Run, at time.Time, keep func(Run) bool) int64 {
	var want int64
	for _, o := range h.Runs {
		if o.Region == r.Region && o.Category == r.Category && o.ID > want && keep(o) &&
			o.Pages > 0 && !o.Finished.IsZero() && o.Finished.Before(at) && !h.onCopy(o.Started) {
			want = o.ID
		}
	}
	return want
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

package sim

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/ingestworks/ingest/store"
)

// checkRanks: a chart's rank is the video's place in the whole chart as
// the upstream answered the pass, counted from 1 over its pages in their
// order (docs/contract.md's rank, docs/api.md). Each entry a reader was
// served, and each row the database holds at the end for a run a reader
// was served, ranks its video where the fake placed it in its answers to
// that run's pass. A video the pass met on two pages (the chart moved
// between them) may rank at either place; a video deleted since leaves a
// gap, never a shift. Readers served charts none of which could be
// checked checked nothing.
func checkRanks(h *History) []string {
	if !h.Readers {
		return nil
	}
	var wrong []string
	checked, served := 0, 0
	seen := map[int64]bool{}
	for _, s := range h.Served {
		if s.Down || s.Err != "" || len(s.Entries) == 0 || h.onCopy(s.At) {
			continue
		}
		served++
		r, ok := h.runOf(s.RunID)
		if !ok {
			continue
		}
		places := h.upstreamPlaces(r)
		if len(places) == 0 {
			continue
		}
		checked++
		at := s.At.UTC().Format(time.RFC3339)
		if f := misranked(s.Entries, places); f != "" {
			wrong = append(wrong, fmt.Sprintf("at %s %s's run %d served %s", at, chartName(r.Region, r.Category), r.ID, f))
		}
		if seen[r.ID] {
			continue
		}
		seen[r.ID] = true
		if f := misranked(h.Ranked[r.ID], places); f != "" {
			wrong = append(wrong, fmt.Sprintf("%s's run %d stored %s", chartName(r.Region, r.Category), r.ID, f))
		}
	}
	var out []string
	if len(wrong) > 0 {
		out = append(out, fmt.Sprintf("ranks: %d charts ranked a video elsewhere than the upstream placed it: %s", len(wrong), firstFew(wrong)))
	}
	if served > 0 && checked == 0 {
		out = append(out, fmt.Sprintf("readers were served %d charts and none of their runs' pages was found among the upstream's answers: no rank was checked", served))
	}
	return out
}

// misranked says the first of entries whose rank is not a place places
// gives its video, and how many are so, "" for none.
func misranked(entries []Shown, places map[string][]int) string {
	bad, first := 0, ""
	for _, e := range entries {
		if slices.Contains(places[e.ID], e.Rank) {
			continue
		}
		if bad == 0 {
			first = fmt.Sprintf("%s at rank %d, placed %v by the upstream", e.ID, e.Rank, places[e.ID])
		}
		bad++
	}
	if bad == 0 {
		return ""
	}
	return fmt.Sprintf("%d of %d entries misranked, the first %s", bad, len(entries), first)
}

// runOf is the run of the database the daemon served from with id: a
// run of the copy it moved to for a while is not it.
func (h *History) runOf(id int64) (Run, bool) {
	for _, r := range h.Runs {
		if r.ID == id && !h.onCopy(r.Started) {
			return r, true
		}
	}
	return Run{}, false
}

// upstreamPlaces is each video's places (from 1) in the chart as the fake
// answered r's pass: the chart's pages it answered whole after the
// chart's run before r and by r's end, each page token's last answer, in
// the order the pass first asked them. Nil when none was found.
func (h *History) upstreamPlaces(r Run) map[string][]int {
	from := time.Time{}
	for _, o := range h.Runs {
		if o.ID != r.ID && o.Region == r.Region && o.Category == r.Category && o.Started.Before(r.Started) && !h.onCopy(o.Started) {
			from = o.Started
			if o.Finished.After(from) {
				from = o.Finished
			}
		}
	}
	to := r.Finished
	if to.IsZero() {
		to = h.End
	}
	// the database keeps milliseconds: a call in the run's last one is its
	to = to.Add(time.Millisecond)
	var order []string
	pages := map[string][]string{}
	for _, c := range h.Calls {
		if c.Kind != KindChart || c.Status != http.StatusOK || c.Cut || c.Region != r.Region || c.Category != r.Category ||
			!c.At.After(from) || c.At.Before(r.Started) || c.At.After(to) {
			continue
		}
		if _, ok := pages[c.Page]; !ok {
			order = append(order, c.Page)
		}
		pages[c.Page] = c.IDs
	}
	if len(order) == 0 || order[0] != "" {
		return nil // the pass's first page is not among them
	}
	places := map[string][]int{}
	n := 0
	for _, tok := range order {
		for _, id := range pages[tok] {
			n++
			places[id] = append(places[id], n)
		}
	}
	return places
}

// readRanked is the entries the database holds for each run a reader was
// served and each run such a chart named its previous, in rank order.
func readRanked(ctx context.Context, db *store.DB, served []Served) (map[int64][]Shown, error) {
	var ids []string
	seen := map[int64]bool{}
	for _, s := range served {
		for _, id := range []int64{s.RunID, s.PrevRunID} {
			if id != 0 && !seen[id] {
				seen[id] = true
				ids = append(ids, strconv.FormatInt(id, 10))
			}
		}
	}
	if len(ids) == 0 {
		return nil, nil
	}
	rows, err := db.Reader().QueryContext(ctx, `SELECT t.run_id, t.rank, v.id FROM trending_entries AS t JOIN videos AS v ON v.vid = t.vid
WHERE t.run_id IN (`+strings.Join(ids, ",")+`) ORDER BY t.run_id, t.rank`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[int64][]Shown{}
	for rows.Next() {
		var run int64
		var e Shown
		if err := rows.Scan(&run, &e.Rank, &e.ID); err != nil {
			return nil, err
		}
		out[run] = append(out[run], e)
	}
	return out, rows.Err()
}

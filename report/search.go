package report

import (
	"fmt"
	"io"
	"sort"
	"text/tabwriter"
	"time"

	"github.com/ingestworks/ingest"
)

// SearchPlan is the most a backfill may spend in one invocation.
type SearchPlan struct {
	Pages   int64            // pages at most
	PerPage map[string]int64 // one page, units by pool
	Need    map[string]int64 // Pages of them, units by pool
}

// PlanSearch plans maxPages pages of perPage each, fewer when maxUnits
// (all pools together; 0 is no cap) pays for fewer.
func PlanSearch(perPage map[string]int64, maxPages int, maxUnits int64) SearchPlan {
	p := SearchPlan{Pages: int64(maxPages), PerPage: perPage, Need: map[string]int64{}}
	if page := sum(perPage); maxUnits > 0 && page > 0 {
		p.Pages = min(p.Pages, maxUnits/page)
	}
	for pool, u := range perPage {
		p.Need[pool] = u * p.Pages
	}
	return p
}

// PoolCover is one pool's room against what a plan needs of it.
type PoolCover struct {
	Pool      string
	Remaining int64
	Capacity  int64
	Need      int64
}

// Cover holds the pools' states against the plan, pool by pool in name
// order; covered says the room there is now pays for all of it, and
// blocked is the latest time until which the upstream blocked one of the
// pools (zero: none).
func (p SearchPlan) Cover(states []ingest.PoolState) (rows []PoolCover, covered bool, blocked time.Time) {
	covered = true
	for _, st := range states {
		need, ok := p.Need[st.Pool]
		if !ok {
			continue
		}
		rows = append(rows, PoolCover{Pool: st.Pool, Remaining: st.Remaining, Capacity: st.Limit - st.Reserve, Need: need})
		if st.Remaining < need {
			covered = false
		}
		if st.BlockedUntil.After(blocked) {
			blocked, covered = st.BlockedUntil, false
		}
	}
	sort.Slice(rows, func(i, j int) bool { return rows[i].Pool < rows[j].Pool })
	return rows, covered, blocked
}

// PrintCover prints Cover as backfill --dry-run shows it: each pool's
// room against the plan's need, and whether today's room pays for it.
func (p SearchPlan) PrintCover(out io.Writer, states []ingest.PoolState) {
	rows, covered, blocked := p.Cover(states)
	for _, r := range rows {
		fmt.Fprintf(out, "  %s: %d remaining of %d now, %d needed\n", r.Pool, r.Remaining, r.Capacity, r.Need)
	}
	if covered {
		fmt.Fprintln(out, "  today's remaining quota covers it")
		return
	}
	fmt.Fprintln(out, "  today's remaining quota does NOT cover all of it: it runs until the limiter says no, then stops cleanly;")
	fmt.Fprintln(out, "  the units free up as the trailing window moves (see `ingest report`), at the latest by the next reset")
	if !blocked.IsZero() {
		fmt.Fprintf(out, "  the upstream blocked the pool until %s\n", blocked.UTC().Format(time.RFC3339))
	}
}

// Backfills writes `ingest backfill --list`'s table: each backfill's
// cursor, where it resumes and what it has spent.
func Backfills(out io.Writer, curs []ingest.Cursor) error {
	if len(curs) == 0 {
		_, err := fmt.Fprintln(out, "no backfills yet")
		return err
	}
	w := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(w, "REGION\tSINCE\tUNTIL\tQUERY\tPAGES\tVIDEOS\tUNITS\tSTATE\tUPDATED")
	for _, c := range curs {
		until := "open-ended"
		if !c.ID.OpenEnded() {
			until = c.ID.Until.Format(time.RFC3339)
		}
		state := fmt.Sprintf("resumes at page %d", c.Pages+1)
		if c.Done {
			state = "complete"
		}
		query := c.ID.Query
		if query == "" {
			query = "(any)"
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%d\t%d\t%d\t%s\t%s\n", c.ID.Region, c.ID.Since.Format(time.RFC3339), until,
			query, c.Pages, c.Videos, c.Units, state, c.Updated.Format(time.RFC3339))
	}
	return w.Flush()
}

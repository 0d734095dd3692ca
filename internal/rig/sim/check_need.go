package sim

import (
	"fmt"
	"net/http"
	"slices"
	"time"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/jobs"
	"github.com/ingestworks/ingest/regions"
)

// The upstream's own day, and work held to its need: what the daemon
// asks of the upstream is read from the fake's calls alone, each by what
// it asked for (a chart's page, a region's category names, videos by id).

// checkUpstreamDays: on no calendar day of the upstream (its Pacific day,
// 23 and 25 hours long on the days its clocks change) did it charge a pool
// more than the pool's limit less its reserve: the pools are budgets of
// the upstream's daily quota, which resets at its midnight in Los Angeles
// (docs/explanation/quota.md), whatever zone the limiter reads its day in.
func checkUpstreamDays(h *History) []string {
	var out []string
	for _, pool := range h.Costs.Pools {
		for _, d := range upstreamDays(h.Calls, pool.Name) {
			if d.charged > pool.Capacity() {
				out = append(out, fmt.Sprintf("pool %s: the upstream charged %d units on its day of %s (%s long), over the pool's limit less reserve (%d)",
					pool.Name, d.charged, d.start.Format(time.DateOnly), ingest.UpstreamReset(d.start).Sub(d.start), pool.Capacity()))
			}
		}
	}
	return out
}

// upstreamDay is what the upstream charged a pool on one of its days.
type upstreamDay struct {
	start   time.Time
	charged int64
}

// upstreamDays is what the fake charged pool on each of the upstream's
// calendar days that had a call, in order.
func upstreamDays(calls []Call, pool string) []upstreamDay {
	var out []upstreamDay
	var prev int64
	for _, c := range calls {
		l := c.At.In(ingest.UpstreamZone)
		d := time.Date(l.Year(), l.Month(), l.Day(), 0, 0, 0, 0, ingest.UpstreamZone)
		if len(out) == 0 || !out[len(out)-1].start.Equal(d) {
			out = append(out, upstreamDay{start: d})
		}
		out[len(out)-1].charged += c.Charged[pool] - prev
		prev = c.Charged[pool]
	}
	return out
}

// dayMost is the most the upstream charged pool on one of its days.
func dayMost(calls []Call, pool string) int64 {
	var most int64
	for _, d := range upstreamDays(calls, pool) {
		most = max(most, d.charged)
	}
	return most
}

// refusedPool is the pool the upstream refused c for as spent for its
// day, "" when it did not: 403 quotaExceeded is the project's units (the
// default pool; the sim makes no key the upstream rejects), a 429 is the
// call's own bucket's "per day" (the simulation fails no call with a
// 429 of the minute).
func refusedPool(c Call) string {
	if c.Proxy {
		return "" // a proxy's own status, no word of the upstream's
	}
	switch c.Status {
	case http.StatusForbidden:
		return ingest.DefaultPool
	case http.StatusTooManyRequests:
		return poolOf(c)
	}
	return ""
}

// checkRefusedUntilReset: once the upstream refused a pool's call as over
// its day's quota, no call of that pool reached it before the pool's
// reset, the upstream's next midnight, but those already in flight: a
// refused pool is blocked for every worker until the upstream's reset
// (docs/explanation/quota.md). The nemesis's
// refusals are checkBlocks'; these are the upstream's own, when a pool's
// day is spent.
func checkRefusedUntilReset(h *History) []string {
	var again []string
	for i, c := range h.Calls {
		pool := refusedPool(c)
		if pool == "" || slices.ContainsFunc(h.Refusals, func(r Interval) bool { return r.Contains(c.At) }) {
			continue
		}
		reset := ingest.UpstreamReset(c.At)
		for _, d := range h.Calls[i+1:] {
			if !d.At.Before(reset) {
				break
			}
			if poolOf(d) == pool && d.At.After(c.At.Add(inFlight)) {
				again = append(again, fmt.Sprintf("pool %s refused at %s, called again at %s, before the upstream's midnight at %s",
					pool, c.At.UTC().Format(time.RFC3339), d.At.UTC().Format(time.TimeOnly), reset.UTC().Format(time.RFC3339)))
				break
			}
		}
	}
	if len(again) == 0 {
		return nil
	}
	return []string{fmt.Sprintf("the daemon called the upstream %d times for a pool it had refused as spent for its day: %s", len(again), firstFew(again))}
}

// unsettled: what the daemon got at t may not have been kept, so that
// asking it again is not work done twice: the upstream was failing or
// cut its answers, the disk was full, the process stopped or a second
// process ran, within a minute of t.
func (h *History) unsettled(t time.Time) bool {
	in := Interval{t, t.Add(time.Minute)}
	return h.failingIn(in) || h.downIn(in.From, in.To) || h.joinedIn(in)
}

// startIn: a life of the process started in (from, to].
func (h *History) startIn(from, to time.Time) bool {
	return slices.ContainsFunc(h.Starts, func(s time.Time) bool { return s.After(from) && !s.After(to) })
}

// joinedIn: a second process ran on the key at some moment of in.
func (h *History) joinedIn(in Interval) bool {
	for _, j := range h.Joins {
		if !j.From.After(in.To) && !in.From.After(j.To) {
			return true
		}
	}
	return false
}

// checkNeed: each kind of work asks the upstream for what is due, and
// nothing more.
//   - A region's category names are asked at most once in a day
//     (jobs.CategoriesEvery: "the category names a region's first pass of
//     a day reads", docs/explanation/pacing.md).
//   - A chart's page is fetched once a pass: no page again sooner than the
//     chart's cadence less its stagger step, by the daemon (the cadence is
//     the least a chart waits between passes, docs/explanation/pacing.md).
//   - The refresh fetches a video again by id once its text is
//     ingest.RefreshAfter old, not before (docs/explanation/terms.md).
//   - Tracking reads a video's counts once a slot of --track-every
//     (docs/data.md): no batch of ids asked again within half a slot.
//
// Answers the daemon may not have kept (unsettled) are let be.
func checkNeed(h *History) []string {
	var out []string
	step := h.Every / time.Duration(max(len(h.Charts)*len(h.categories()), len(regions.Default)))
	tier := map[string]int{}
	for _, c := range h.Charts {
		tier[c.Code] = c.Tier
	}
	lastCats := map[string]time.Time{}
	lastPage := map[[3]string]time.Time{}
	firstOfLife := map[[3]string]bool{} // the page's last fetch was its first in a life of the process
	lastID := map[string]time.Time{}
	lastBatch := map[string]time.Time{}
	var cats, pages, ids, tracked []string
	for _, c := range h.Calls {
		if c.Status != http.StatusOK || c.Cut {
			continue
		}
		switch c.Kind {
		case KindCategories:
			if last, ok := lastCats[c.Region]; ok && c.At.Sub(last) < jobs.CategoriesEvery && !h.unsettled(last) {
				cats = append(cats, fmt.Sprintf("%s at %s and %s", c.Region, last.UTC().Format(time.RFC3339), c.At.UTC().Format(time.RFC3339)))
			}
			lastCats[c.Region] = c.At
		case KindChart:
			t, ok := tier[c.Region]
			if !ok {
				continue // the second process's chart
			}
			key := [3]string{c.Region, c.Category, c.Page}
			least := time.Duration(t) * (h.Every - step)
			last, ok := lastPage[key]
			// unpaced, the catch-up at a start does not stand for the
			// chart's next slot: every slot runs (checkCatchUps)
			caughtUp := h.NoPace && firstOfLife[key]
			// a slot the upstream's failure (or a stop) held back passes
			// late, and the next slot's pass comes sooner after it
			late := h.failingIn(Interval{last.Add(-time.Duration(t) * h.Every), last}) || h.downIn(last.Add(-time.Duration(t)*h.Every), last)
			if ok && c.At.Sub(last) < least && !caughtUp && !late && !h.unsettled(last) && !h.downIn(last, c.At) && !h.joinedIn(Interval{last, c.At}) {
				pages = append(pages, fmt.Sprintf("%s page %q at %s and %s (%s later, under %s)", chartName(c.Region, c.Category), c.Page,
					last.UTC().Format(time.RFC3339), c.At.UTC().Format(time.TimeOnly), c.At.Sub(last), least))
			}
			lastPage[key], firstOfLife[key] = c.At, !ok || h.startIn(last, c.At)
		case KindByID:
			for _, id := range c.IDs {
				if last, ok := lastID[id]; ok && c.At.Sub(last) < ingest.RefreshAfter && !h.unsettled(last) {
					ids = append(ids, fmt.Sprintf("%s at %s and %s", id, last.UTC().Format(time.RFC3339), c.At.UTC().Format(time.RFC3339)))
				}
				lastID[id] = c.At
			}
		case KindStats:
			if last, ok := lastBatch[c.First]; ok && c.At.Sub(last) < h.TrackEvery/2 && !h.unsettled(last) {
				tracked = append(tracked, fmt.Sprintf("the batch from %s at %s and %s", c.First, last.UTC().Format(time.RFC3339), c.At.UTC().Format(time.TimeOnly)))
			}
			lastBatch[c.First] = c.At
		}
	}
	if len(tracked) > 0 {
		out = append(out, fmt.Sprintf("%d times tracking asked a batch's counts again within half a slot of --track-every %s: %s", len(tracked), h.TrackEvery, firstFew(tracked)))
	}
	if len(cats) > 0 {
		out = append(out, fmt.Sprintf("%d times a region's category names were asked again within a day (%s): %s", len(cats), jobs.CategoriesEvery, firstFew(cats)))
	}
	if len(pages) > 0 {
		out = append(out, fmt.Sprintf("%d chart pages were fetched again sooner than the chart's cadence less a step: %s", len(pages), firstFew(pages)))
	}
	if len(ids) > 0 {
		out = append(out, fmt.Sprintf("%d times the refresh fetched a video again before its text was %s old: %s", len(ids), ingest.RefreshAfter, firstFew(ids)))
	}
	return out
}

// checkExercised: over a history long enough for each kind of work to be
// due, it had work and did it, or nothing held what it does. The charts
// move and let videos go for good (NewUpstream), so videos stored and
// no longer charting come due for the refresh at ingest.RefreshAfter;
// the upstream forgets a video a day, which the refresh finds gone and
// deletes by the time the backlog's share is spread over, halfway to
// ingest.DataFor (jobs.Refresh); the prune deletes the runs the standing
// keeps no longer (docs/explanation/terms.md).
func checkExercised(h *History) []string {
	var out []string
	due := h.Start.Add(ingest.RefreshAfter + 2*24*time.Hour)
	if h.End.After(due) {
		n := 0
		for _, c := range h.Calls {
			if c.Kind == KindByID {
				n++
			}
		}
		if n == 0 {
			out = append(out, fmt.Sprintf("in %d days the refresh fetched nothing, where videos that left the charts were due from %s: the refresh was not exercised",
				h.Days, h.Start.Add(ingest.RefreshAfter).UTC().Format(time.DateOnly)))
		}
	}
	found := h.End.Add(-(ingest.RefreshAfter+ingest.DataFor)/2 - 2*24*time.Hour)
	if len(h.Forgotten) > 0 && h.Forgotten[0].At.Before(found) && len(h.Tombstones) == 0 {
		out = append(out, fmt.Sprintf("the upstream forgot %s at %s and nothing was deleted as gone in the %s after: the terms' deletes were not exercised",
			h.Forgotten[0].ID, h.Forgotten[0].At.UTC().Format(time.RFC3339), h.End.Sub(h.Forgotten[0].At).Round(time.Hour)))
	}
	keep := ingest.StandardStanding().StatsFor + 2*24*time.Hour
	if h.End.Sub(h.Start) > keep {
		for _, r := range h.Runs { // in the order they started
			if !r.Finished.IsZero() && r.Started.Before(h.End.Add(-keep)) {
				out = append(out, fmt.Sprintf("the database still holds a finished chart run of %s, %s before the end: the prune did not delete what the standing keeps no longer (%s)",
					r.Started.UTC().Format(time.RFC3339), h.End.Sub(r.Started).Round(time.Hour), ingest.StandardStanding().StatsFor))
				break
			}
		}
	}
	return out
}

// checkBackups: with --backup-every, the daemon backed its database up
// every period and kept the newest --backup-keep (docs/operations/backups.md):
// at the end the folder holds that many, or all it took when fewer
// periods passed, each a period after the one before (a minute either
// way), the newest within a period and a minute of the end.
func checkBackups(h *History) []string {
	if h.BackupEvery <= 0 {
		return nil
	}
	b := h.Backups
	if len(b) == 0 {
		return []string{fmt.Sprintf("in %d days at --backup-every %s no backup is left", h.Days, h.BackupEvery)}
	}
	var out []string
	if want := min(h.BackupKeep, int(h.End.Sub(h.Start)/h.BackupEvery)); len(b) != want && len(b) != want+1 {
		out = append(out, fmt.Sprintf("%d backups are left at the end, where --backup-keep %d keeps %d", len(b), h.BackupKeep, want))
	}
	if last := b[len(b)-1]; h.End.Sub(last) > h.BackupEvery+time.Minute {
		out = append(out, fmt.Sprintf("the newest backup was taken at %s, %s before the end, over --backup-every %s",
			last.UTC().Format(time.RFC3339), h.End.Sub(last), h.BackupEvery))
	}
	for i := 1; i < len(b); i++ {
		if d := b[i].Sub(b[i-1]); d < h.BackupEvery-time.Minute || d > h.BackupEvery+time.Minute+h.excused(b[i-1], b[i], h.BackupEvery) {
			out = append(out, fmt.Sprintf("backups at %s and %s are %s apart, at --backup-every %s",
				b[i-1].UTC().Format(time.RFC3339), b[i].UTC().Format(time.RFC3339), d, h.BackupEvery))
			break
		}
	}
	return out
}

// Work says what the refresh and the terms' deletes had to do: the
// refresh's calls and the videos they asked, the videos the upstream
// forgot and those the database deleted as gone.
func Work(h *History) string {
	calls, ids := 0, 0
	for _, c := range h.Calls {
		if c.Kind == KindByID {
			calls++
			ids += len(c.IDs)
		}
	}
	return fmt.Sprintf("the refresh made %d calls for %d videos; the upstream forgot %d videos, %d deleted as gone",
		calls, ids, len(h.Forgotten), len(h.Tombstones))
}

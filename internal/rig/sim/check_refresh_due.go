package sim

// A refresh pass takes some of what is due. docs/explanation/terms.md: the
// videos due are spread, oldest first and in whole calls, over the passes
// left. A share in whole calls of something due is never none: a pass that
// finds a video due fetches at least one call of them.

import (
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/ingestworks/ingest"
)

// checkRefreshTookDue: every refresh pass of the daemon that completed
// with a video due made a call by id before the next pass. A video was
// due at a pass when every call that named it before the pass (a chart's
// page, a fetch by id, a search) was ingest.RefreshAfter or more before
// it, a minute of storing aside, and the first call that named it after
// the pass was a fetch by id: the refresh asks only for the videos kept
// rows still show, and no row of it came between, so it was kept at the
// pass too. A pass the upstream's failure, a stop or a second process
// met is let be.
func checkRefreshTookDue(h *History) []string {
	var passes []time.Time
	for _, p := range h.Passes {
		if p.Entry == "refresh" && p.Status == ingest.StatusCompleted {
			passes = append(passes, p.Started)
		}
	}
	slices.SortFunc(passes, func(a, b time.Time) int { return a.Compare(b) })
	named := namings(h)
	var bad []string
	for i, p := range passes {
		next := h.End
		if i+1 < len(passes) {
			next = passes[i+1]
		}
		if h.failingIn(Interval{p, next}) || h.downIn(p, next) || h.joinedIn(Interval{p, next}) || byIDIn(h, p, next) {
			continue
		}
		if id, last := dueAt(h, named, p); id != "" {
			bad = append(bad, fmt.Sprintf("at %s, %s due since its text was fetched at %s", p.UTC().Format(time.RFC3339), id, last.UTC().Format(time.RFC3339)))
		}
	}
	if len(bad) == 0 {
		return nil
	}
	return []string{fmt.Sprintf("%d refresh passes fetched nothing with a video due (a share in whole calls of what is due is at least one call): %s", len(bad), firstFew(bad))}
}

// naming is a call that named a video: when, and whether it fetched it by
// id for the refresh.
type naming struct {
	at   time.Time
	byID bool
}

// namings are the calls that named each video, in the order the fake
// answered them.
func namings(h *History) map[string][]naming {
	out := map[string][]naming{}
	for _, c := range h.Calls {
		for _, id := range c.IDs {
			out[id] = append(out[id], naming{c.At, c.Kind == KindByID})
		}
	}
	return out
}

// byIDIn: the daemon fetched videos by id in [from, to).
func byIDIn(h *History, from, to time.Time) bool {
	return slices.ContainsFunc(h.Calls, func(c Call) bool {
		return c.Kind == KindByID && c.Worker == WorkerDaemon && !c.At.Before(from) && c.At.Before(to)
	})
}

// dueAt is a video due at the refresh pass at p, and when its text was
// last fetched; "" for none found.
func dueAt(h *History, named map[string][]naming, p time.Time) (string, time.Time) {
	ids := slices.Sorted(maps.Keys(named))
	for _, id := range ids {
		n := named[id]
		k := slices.IndexFunc(n, func(x naming) bool { return !x.at.Before(p) })
		if k < 1 || !n[k].byID {
			continue
		}
		if last := n[k-1].at; !last.Add(ingest.RefreshAfter+time.Minute).After(p) && !h.unsettled(last) {
			return id, last
		}
	}
	return "", time.Time{}
}

package pace

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"math"
	"time"

	"github.com/ingestworks/ingest"
)

// Records is what a worker's database keeps that the pacer starts from:
// its ledger, its entries' last passes and their measured costs (the
// store implements it).
type Records interface {
	Calls(ctx context.Context, quotaKey string, since time.Time) ([]ingest.Call, error)
	LastPasses(ctx context.Context, quotaKey string, since time.Time) (map[string]time.Time, error)
	PassCosts(ctx context.Context, quotaKey string, since time.Time) (map[string]map[string]float64, error)
	// StoppedPasses are the charts' runs the quota stopped since.
	StoppedPasses(ctx context.Context, since time.Time) ([]ingest.Stopped, error)
	// Plan is the last plan a pacer of quotaKey published (Status as
	// JSON), ok false when none.
	Plan(ctx context.Context, quotaKey string) (plan []byte, at time.Time, ok bool, err error)
}

// PlanSaver is where a pacer's plans are kept for the next pacer and the
// reports to read (Records.Plan): the ledger's.
type PlanSaver interface {
	SavePlan(ctx context.Context, quotaKey string, at time.Time, plan []byte) error
}

// Keep is a Config.Publish that keeps every plan of quotaKey's pacer in
// db, as Records.Plan reads it; a plan it cannot keep is said on log, and
// report and the dashboard then show one made from the ledger.
func Keep(db PlanSaver, quotaKey string, log *slog.Logger) func(context.Context, Status) {
	return func(ctx context.Context, st Status) {
		doc, err := json.Marshal(st)
		if err == nil {
			err = db.SavePlan(context.WithoutCancel(ctx), quotaKey, st.At, doc)
		}
		if err != nil {
			log.Warn("pace: publish the plan; report and the dashboard show one made from the ledger", ingest.LogErr, err)
		}
	}
}

// Follower is Records that can read a quota key's calls in write order
// (ledger.Ledger.Follow): the reader it returns keeps what it read and
// reads again only what was written after, whatever time the limiter
// stamped it with, and gives what Calls would.
type Follower interface {
	Follow(quotaKey string) func(ctx context.Context, since time.Time) ([]ingest.Call, error)
}

// lookBack is how far back an entry's last pass and its costs are read:
// an entry not fetched for that long runs at once.
const lookBack = 48 * time.Hour

// FromRecords is a Pacer's History read from a worker's database, for
// quotaKey's pools: its own calls in each pool's window and an edge
// before it (calls given back left out), each entry's last pass, the
// costs of the last day's passes, and the hold the last published plan
// left. When r is a Follower, the calls are read through one follower:
// each History after the first reads only what the ledger gained since.
func FromRecords(r Records, quotaKey string, pools []ingest.Pool) func(ctx context.Context, now time.Time) (History, error) {
	read := func(ctx context.Context, since time.Time) ([]ingest.Call, error) {
		return r.Calls(ctx, quotaKey, since)
	}
	if f, ok := r.(Follower); ok {
		read = f.Follow(quotaKey)
	}
	return func(ctx context.Context, now time.Time) (History, error) {
		h := History{Spent: map[string][]Spent{}}
		calls, err := read(ctx, HistorySince(pools, now))
		if err != nil {
			return h, fmt.Errorf("ledger: %w", err)
		}
		searched := searches(calls)
		for _, c := range calls {
			for _, ch := range c.Charges {
				if ch.Units > 0 {
					h.Spent[ch.Pool] = append(h.Spent[ch.Pool], Spent{At: c.At, Units: ch.Units, Region: chartRegion(c, searched)})
				}
			}
		}
		if h.Last, err = r.LastPasses(ctx, quotaKey, now.Add(-lookBack)); err != nil {
			return h, err
		}
		if h.Cost, err = r.PassCosts(ctx, quotaKey, now.Add(-24*time.Hour)); err != nil {
			return h, err
		}
		stopped, err := r.StoppedPasses(ctx, HistorySince(pools, now))
		if err != nil {
			return h, err
		}
		h.Short = shortOf(stopped, calls, h.Cost)
		doc, _, ok, err := r.Plan(ctx, quotaKey)
		if err != nil {
			return h, err
		}
		var st Status
		if ok && json.Unmarshal(doc, &st) == nil {
			h.Hold(st)
		}
		return h, nil
	}
}

// chartRegion is the region of the chart pass that made the call; "" for
// a call outside a run of a region, and for a backfill's (a run in
// searched), whose spend is one-off and its own: it takes what the plan
// leaves, and must not shrink the plan to leave it more.
func chartRegion(c ingest.Call, searched map[int64]bool) string {
	if c.RunID == 0 || searched[c.RunID] {
		return ""
	}
	return c.Region
}

// shortOf is, by pool, what each stopped run wanted and did not get: its
// chart's measured cost of a pass less what the run spent, at the run's
// start, with its region. A chart with no completed pass measured wanted
// what it spent, as far as the records tell.
func shortOf(stopped []ingest.Stopped, calls []ingest.Call, cost map[string]map[string]float64) map[string][]Spent {
	spent := map[int64]map[string]int64{}
	for _, c := range calls {
		if c.RunID == 0 {
			continue
		}
		if spent[c.RunID] == nil {
			spent[c.RunID] = map[string]int64{}
		}
		for _, ch := range c.Charges {
			spent[c.RunID][ch.Pool] += ch.Units
		}
	}
	out := map[string][]Spent{}
	for _, s := range stopped {
		for pool, c := range cost[s.Chart] {
			if short := int64(math.Ceil(c-1e-9)) - spent[s.RunID][pool]; short > 0 {
				out[pool] = append(out[pool], Spent{At: s.Started, Units: short, Region: s.Region})
			}
		}
	}
	return out
}

// searches is the runs among calls that searched: a backfill's, each of
// whose pages is a search (ingest.Search) before the videos' details, so
// its every call is known by its run; a chart's pass never searches.
func searches(calls []ingest.Call) map[int64]bool {
	runs := map[int64]bool{}
	for _, c := range calls {
		if c.RunID != 0 && c.Op == ingest.OpSearchList {
			runs[c.RunID] = true
		}
	}
	return runs
}

// Hold sets h's hold (Dropped, Held, Returned) to what the plan st left:
// the entries it dropped, since when it held each, when it last took each
// back.
func (h *History) Hold(st Status) {
	h.Dropped, h.Held, h.Returned = map[string]bool{}, map[string]time.Time{}, map[string]time.Time{}
	for _, e := range st.Entries {
		if e.Dropped {
			h.Dropped[e.Name] = true
		}
		if !e.Held.IsZero() {
			h.Held[e.Name] = e.Held
		}
		if !e.Returned.IsZero() {
			h.Returned[e.Name] = e.Returned
		}
	}
}

// HistorySince is the earliest call FromRecords reads at now: the
// pools' longest window and an edge before it, where a spend of this
// worker's the limiter still counts may be (others).
func HistorySince(pools []ingest.Pool, now time.Time) time.Time {
	return now.Add(-longest(pools) - edge)
}

func longest(pools []ingest.Pool) time.Duration {
	var w time.Duration
	for _, p := range pools {
		w = max(w, p.Window)
	}
	return w
}

// History is what the worker's database says of its own past: the pacer
// starts from it, so that a restart costs nothing.
type History struct {
	// Spent is this worker's own calls (its ledger's) in each pool's
	// window, by pool.
	Spent map[string][]Spent
	// Short is, by pool, what the runs the quota stopped in each pool's
	// window wanted beyond what they spent (shortOf): a co-tenant the
	// limiter refused still asks at its next run.
	Short map[string][]Spent
	// Last is when each entry's latest completed pass started.
	Last map[string]time.Time
	// Cost is each entry's mean cost per pass over its recent passes, by
	// pool; an entry without one keeps its guess.
	Cost map[string]map[string]float64
	// Dropped, Held and Returned are the hold as the last published plan
	// left it (Pacer.hold): what it dropped, since when it held each entry
	// dropped, and when it last took each back. A pacer's first plan goes
	// on from them, so a restart neither takes back a chart the plans held
	// out nor forgets one it took back.
	Dropped  map[string]bool
	Held     map[string]time.Time
	Returned map[string]time.Time
}

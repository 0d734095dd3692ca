package pace

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/ingestworks/ingest"
)

// Costs measures what each entry's recent passes cost, by entry name and
// pool: the store's ledger of the runs that completed since a time.
type Costs func(ctx context.Context, since time.Time) (map[string]map[string]float64, error)

// Pacer decides, at each of an entry's slots, whether the entry runs
// there, so that every entry keeps the cadence of the current plan on
// average. Its methods are safe for concurrent use.
type Pacer struct {
	// Pools are the quota's pools (costs.yaml).
	Pools []ingest.Pool
	// State reads the limiter's pools: what remains, what is used, blocks.
	State func(ctx context.Context) ([]ingest.PoolState, error)
	// Measure, when set, seeds each entry's cost per pass from its recent
	// passes before the first plan.
	Measure Costs
	Now     func() time.Time // time.Now when nil
	Logger  *slog.Logger
	// Refresh is the longest a plan is kept without an event: other
	// workers' spend shows only when the state is read again.
	Refresh time.Duration

	mu      sync.Mutex
	entries []Entry
	index   map[string]int
	recent  map[string][]map[string]float64 // each entry's last passes' costs
	credit  map[string]float64
	asked   map[string]time.Time
	mine    map[string][]Spent // by pool
	plan    Plan
	budgets []Budget
	planAt  time.Time
	until   time.Time // the plan's horizon ends: the reset, or a block's end
	stale   string    // why the next call re-plans; "" none
}

// costWindow is how many recent passes an entry's cost is the mean of.
const costWindow = 5

// dearer is how much a pass may cost over the plan's figure before the
// plan is made again.
const dearer = 1.1

// New returns a pacer of entries, whose Cost is each one's guess until a
// pass is measured.
func New(pools []ingest.Pool, state func(context.Context) ([]ingest.PoolState, error), entries []Entry) *Pacer {
	p := &Pacer{Pools: pools, State: state, entries: entries, index: map[string]int{},
		recent: map[string][]map[string]float64{}, credit: map[string]float64{},
		asked: map[string]time.Time{}, mine: map[string][]Spent{}, stale: "start"}
	for i, e := range entries {
		p.index[e.Name] = i
	}
	return p
}

func (p *Pacer) now() time.Time {
	if p.Now != nil {
		return p.Now()
	}
	return time.Now()
}

func (p *Pacer) logger() *slog.Logger {
	if p.Logger == nil {
		return slog.Default()
	}
	return p.Logger
}

// Due reports whether the entry runs at slot, and if so counts the run.
// Between two of its slots an entry earns the time between them over its
// planned cadence; it runs when it has earned a whole pass, and never
// keeps more than one, so a slow spell is not made up in a burst. An
// entry the pacer does not know always runs.
func (p *Pacer) Due(ctx context.Context, name string, slot time.Time) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	i, ok := p.index[name]
	if !ok {
		return true
	}
	p.replan(ctx)
	c := p.earned(name, i, slot)
	p.asked[name] = slot
	if c < 1-1e-9 {
		p.credit[name] = c
		return false
	}
	p.credit[name] = c - 1
	return true
}

// earned is the entry's credit at slot: one on its first slot, unless
// the plan has nothing for it.
func (p *Pacer) earned(name string, i int, slot time.Time) float64 {
	every, planned := p.plan.Every[p.entries[i].Name]
	if !planned {
		// No plan yet (the limiter has not answered): the floor, as
		// without pacing; the limiter still decides every call.
		every = p.entries[i].Floor
	}
	last, ok := p.asked[name]
	if !ok && every != Never {
		return 1
	}
	if every == Never || every <= 0 || !slot.After(last) {
		return p.credit[name]
	}
	return min(p.credit[name]+float64(slot.Sub(last))/float64(every), 1)
}

// Ran tells the pacer how a pass of the entry ended: what it spent, by
// pool, and its status. A completed pass is a cost measure; a pass dearer
// than planned, or one stopped for want of quota, makes the next decision
// re-plan.
func (p *Pacer) Ran(name string, units map[string]int64, status ingest.RunStatus) {
	p.mu.Lock()
	defer p.mu.Unlock()
	now := p.now()
	for pool, u := range units {
		if u > 0 {
			p.mine[pool] = append(p.mine[pool], Spent{At: now, Units: u})
		}
	}
	i, ok := p.index[name]
	if !ok {
		return
	}
	switch status {
	case ingest.StatusStopped:
		p.stale = "a pass was stopped for want of quota"
	case ingest.StatusCompleted:
		p.measured(i, units)
	}
}

// measured records a completed pass's cost and re-plans when it was dearer
// than the plan thought.
func (p *Pacer) measured(i int, units map[string]int64) {
	e := &p.entries[i]
	got := map[string]float64{}
	for pool, u := range units {
		got[pool] = float64(u)
		if float64(u) > e.Cost[pool]*dearer {
			p.stale = "a pass cost more than planned"
		}
	}
	r := append(p.recent[e.Name], got)
	if len(r) > costWindow {
		r = r[len(r)-costWindow:]
	}
	p.recent[e.Name] = r
	e.Cost = mean(r)
}

func mean(passes []map[string]float64) map[string]float64 {
	out := map[string]float64{}
	for _, m := range passes {
		for pool, u := range m {
			out[pool] += u / float64(len(passes))
		}
	}
	return out
}

// replan makes the plan again when an event asked for it, the horizon
// ended (the reset, a block's end) or the plan is older than Refresh. A
// limiter that does not answer keeps the plan it had.
func (p *Pacer) replan(ctx context.Context) {
	now := p.now()
	why := p.stale
	switch {
	case why != "":
	case !now.Before(p.until):
		why = "the plan's horizon ended"
	case p.Refresh > 0 && now.Sub(p.planAt) >= p.Refresh:
		why = "refresh"
	default:
		return
	}
	if p.planAt.IsZero() && p.Measure != nil {
		p.seed(ctx, now)
	}
	states, err := p.State(ctx)
	if err != nil {
		p.logger().Warn("pace: the limiter did not answer; keeping the plan", ingest.LogErr, err)
		return
	}
	p.make(states, now)
	p.stale = ""
	p.logger().Debug("pace: planned", "why", why, "until", p.until)
}

// make plans from the limiter's states at now.
func (p *Pacer) make(states []ingest.PoolState, now time.Time) {
	p.budgets = p.budgets[:0]
	p.until = time.Time{}
	for _, st := range states {
		pool, ok := p.pool(st.Pool)
		if !ok {
			continue
		}
		p.mine[st.Pool] = trim(p.mine[st.Pool], now.Add(-pool.Window))
		b := BudgetOf(st, pool, now, p.mine[st.Pool])
		p.budgets = append(p.budgets, b)
		if end := now.Add(b.Horizon); p.until.IsZero() || end.Before(p.until) {
			p.until = end
		}
	}
	p.plan, p.planAt = Make(p.budgets, p.entries), now
}

func (p *Pacer) pool(name string) (ingest.Pool, bool) {
	for _, pl := range p.Pools {
		if pl.Name == name {
			return pl, true
		}
	}
	return ingest.Pool{}, false
}

// trim drops the spends before since.
func trim(s []Spent, since time.Time) []Spent {
	i := 0
	for i < len(s) && !s[i].At.After(since) {
		i++
	}
	return s[i:]
}

// seed takes each entry's cost from its passes of the last day, when it
// has any.
func (p *Pacer) seed(ctx context.Context, now time.Time) {
	got, err := p.Measure(ctx, now.Add(-24*time.Hour))
	if err != nil {
		p.logger().Warn("pace: read the passes' costs; planning with the guesses", ingest.LogErr, err)
		return
	}
	for i, e := range p.entries {
		if c, ok := got[e.Name]; ok && len(c) > 0 {
			p.entries[i].Cost = c
		}
	}
}

package pace

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/ingestworks/ingest"
)

// History is what the worker's database says of its own past: the pacer
// starts from it, so that a restart costs nothing.
type History struct {
	// Spent is this worker's own calls (its ledger's) in each pool's
	// window, by pool.
	Spent map[string][]Spent
	// Last is when each entry's latest completed pass started.
	Last map[string]time.Time
	// Cost is each entry's mean cost per pass over its recent passes, by
	// pool; an entry without one keeps its guess.
	Cost map[string]map[string]float64
}

// Config is everything a pacer needs, given whole to New, which checks it.
type Config struct {
	// Pools are the quota's pools (costs.yaml). Required.
	Pools []ingest.Pool
	// State reads the limiter's pools: what remains, what is used, blocks.
	// Required.
	State func(ctx context.Context) ([]ingest.PoolState, error)
	// Entries are what the pacer paces, each with its cost's guess until a
	// pass is measured (jobs.Kind.Guess); their names unique.
	Entries []Entry
	// History, when set, reads the worker's own spend, its entries' last
	// passes and their costs (the mean over the last day's passes) from its
	// database at every plan, so that every process on the database plans
	// from the same figures; without it, the pacer counts only what it saw
	// run, and an entry's cost is the mean of its last passes.
	History func(ctx context.Context, now time.Time) (History, error)
	// LastPass, when set, reads when an entry's latest pass started in the
	// database, asked at each of its slots: a pass another process on the
	// database ran counts as this one's, so that two daemons on one
	// database (PostgreSQL, several hosts) run each entry at its cadence
	// between them rather than each at its own.
	LastPass func(ctx context.Context, name string) (time.Time, error)
	// Daily is what the worker spends a day outside its entries' passes,
	// by pool (the category names each region's first pass of a day
	// reads): kept out of the rate.
	Daily map[string]float64
	// Publish, when set, is given every plan the pacer makes.
	Publish func(ctx context.Context, st Status)
	Now     func() time.Time // time.Now when nil
	Logger  *slog.Logger     // slog.Default when nil
	// Refresh is the longest a plan is kept without an event: other
	// workers' spend shows only when the state is read again.
	Refresh time.Duration
	// DueFrom says the entries run when a cron starts run --once, not at
	// their slots: the plan's next run of each is then the time from which
	// it is due, and cron runs it at its first start after.
	DueFrom bool
	// Bound is how stale a region's own chart may grow when the pools are
	// short before the plan drops it (--max-stale); DefaultBound when
	// zero.
	Bound time.Duration
}

// Pacer decides, at each of an entry's slots, whether the entry runs
// there, so that every entry keeps the cadence of the current plan on
// average. Its methods are safe for concurrent use.
type Pacer struct {
	cfg     Config
	mu      sync.Mutex
	entries []Entry
	index   map[string]int
	recent  map[string][]map[string]float64 // each entry's last passes' costs
	credit  map[string]float64
	asked   map[string]time.Time
	last    map[string]time.Time         // each entry's latest completed pass
	running map[string]time.Time         // entries granted a pass not yet ended, by slot
	mine    map[string][]Spent           // by pool
	room    map[string]float64           // what the pools hold now, less the passes granted since
	top     map[string]float64           // a round of the level 0 entries, by pool
	rates   map[group]map[string]float64 // what the plan spends by group (spreads), units a second, by pool
	back    map[string]time.Time         // since when the plans keep each entry held dropped (hold)
	// returned is when the plan last took each entry back (hold).
	returned map[string]time.Time
	states   []ingest.PoolState
	shared   bool // another worker spends in a pool
	plan     Plan
	budgets  []Budget
	planAt   time.Time
	until    time.Time // the plan's horizon ends: the reset, or a block's end
	stale    string    // why the next call re-plans; "" none
}

// costWindow is how many recent passes an entry's cost is the mean of.
const costWindow = 5

// dearer is how much a pass may cost over the plan's figure before the
// plan is made again.
const dearer = 1.1

// New returns a pacer of c, or an error naming the field of c that is
// missing or wrong.
func New(c Config) (*Pacer, error) {
	if err := c.check(); err != nil {
		return nil, fmt.Errorf("pace: %w", err)
	}
	p := &Pacer{cfg: c, entries: c.Entries, index: map[string]int{},
		recent: map[string][]map[string]float64{}, credit: map[string]float64{},
		asked: map[string]time.Time{}, last: map[string]time.Time{}, running: map[string]time.Time{},
		mine: map[string][]Spent{}, room: map[string]float64{}, back: map[string]time.Time{}, returned: map[string]time.Time{}, stale: "start"}
	for i, e := range c.Entries {
		p.index[e.Name] = i
	}
	return p, nil
}

func (c Config) check() error {
	switch {
	case len(c.Pools) == 0:
		return errors.New("Config.Pools: no pool to pace")
	case c.State == nil:
		return errors.New("Config.State: required")
	case c.Refresh < 0:
		return fmt.Errorf("Config.Refresh: must be >= 0, got %s", c.Refresh)
	case c.Bound < 0:
		return fmt.Errorf("Config.Bound: must be >= 0, got %s", c.Bound)
	}
	seen := map[string]bool{}
	for i, e := range c.Entries {
		if e.Name == "" || seen[e.Name] {
			return fmt.Errorf("Config.Entries[%d]: name %q empty or repeated", i, e.Name)
		}
		seen[e.Name] = true
	}
	return nil
}

func (p *Pacer) now() time.Time {
	if p.cfg.Now != nil {
		return p.cfg.Now()
	}
	return time.Now()
}

func (p *Pacer) logger() *slog.Logger {
	if p.cfg.Logger == nil {
		return slog.Default()
	}
	return p.cfg.Logger
}

// Due reports whether the entry runs at slot, and if so counts the run.
// Between two of its slots an entry earns the time between them over its
// planned cadence (a whole pass at most); it runs when it has earned a
// whole pass and the pools hold what it costs, one pass a slot, so a slow
// spell is never made up in a burst, and a cadence a little over the slots'
// keeps its rate rather than halving it. An entry earns from its latest
// pass, counted from its recorded start (counted): a chart fetched a
// minute before a restart waits its cadence out, one never fetched runs
// at once. A catch-up at start asks at the time it runs, not at the slot
// it missed, so that its pass is counted where it ran. An entry with a pass under way is not
// due, so its next pass is planned on what this one cost. An entry the
// pacer does not know always runs.
func (p *Pacer) Due(ctx context.Context, name string, slot time.Time) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	i, ok := p.index[name]
	if !ok {
		return true
	}
	if _, busy := p.running[name]; busy {
		return false
	}
	p.replan(ctx)
	p.ranElsewhere(ctx, name)
	c, slotted := p.earned(i, slot), p.onSlot(i, slot)
	if c < 1-1e-9 && !slotted {
		// An ask off the slots (a catch-up, a cron's) that does not run
		// keeps nothing: the entry's next slot earns from its last pass,
		// as a restarted pacer's does.
		return false
	}
	p.asked[name] = latest(slot, p.counted(i, p.last[name], slotted))
	if c < 1-1e-9 {
		p.credit[name] = c
		return false
	}
	if !p.fits(ctx, i) || !p.spread(i, slot) {
		p.credit[name] = 1
		return false
	}
	p.credit[name] = c - 1
	p.running[name] = slot
	p.take(i)
	return true
}

// ranElsewhere takes a pass of the entry another process started since
// this one last looked as its latest: the entry earns from that pass on.
func (p *Pacer) ranElsewhere(ctx context.Context, name string) {
	if p.cfg.LastPass == nil {
		return
	}
	if at, err := p.cfg.LastPass(ctx, name); err == nil && at.After(p.last[name]) {
		p.last[name] = at
	}
}

// counted is when a pass that started at t counts from, as seen from an
// ask at one of the entry's slots (slotted): the slot it started within a
// grain of (the stagger's step), the slot it recorded (which the store
// gives as its start), or a little before t for a pass off the slots
// (early); from any other ask (a cron's
// start, a catch-up) the start of the grain it started in, so that a pass
// started a little after a cron's start is due again at the cron's start a
// cadence later. The grain is the tolerance the running pacer gives a late
// pass (kept), so a restarted pacer, which has only the recorded start,
// counts a pass slowed by the lease, the store or the database as its
// slot's too: a restart at any moment adds no pass and takes none away. A
// catch-up that starts within a grain after the chart's slot is that
// slot's pass, for every pacer alike.
func (p *Pacer) counted(i int, t time.Time, slotted bool) time.Time {
	s := p.entries[i].Slots
	if s == nil || t.IsZero() {
		return t
	}
	if !slotted {
		return p.inGrain(i, t)
	}
	if slot := s.Next(t.Add(-p.grain(i))); !slot.After(t) {
		return slot
	}
	return t.Add(-p.early(i))
}

// early is how long before its start a pass off the entry's slots (a
// catch-up at start) counts: enough that the entry's next pass, at the
// first of its slots a cadence after that, is never more than one and a
// half cadences after the catch-up, and never under half of one. A
// cadence of two of its slots' periods or more needs nothing; at the
// slots' own period, half a cadence.
func (p *Pacer) early(i int) time.Duration {
	every, floor := p.every(i), p.entries[i].Floor
	if every <= 0 || every == Never || floor <= 0 {
		return 0
	}
	return max(floor-every/2, 0)
}

// inGrain is the start of the grain of the entry's schedule that t is in,
// aligned to the Unix epoch as the slots are: a pass counts there against
// its group's rate (spread), so that a start a little after its slot, or
// a cron's, is in that slot's floor.
func (p *Pacer) inGrain(i int, t time.Time) time.Time {
	g := p.grain(i)
	if g <= 0 || t.IsZero() {
		return t
	}
	since := t.Sub(time.Unix(0, 0))
	return t.Add(-(since%g + g) % g)
}

// grain is the time between two slots of the entry's schedule; zero
// without one.
func (p *Pacer) grain(i int) time.Duration {
	if s := p.entries[i].Slots; s != nil {
		return s.Grain()
	}
	return 0
}

// onSlot reports whether t is one of the entry's slots: a daemon's ask at
// a slot, not a catch-up's at the time it runs.
func (p *Pacer) onSlot(i int, t time.Time) bool {
	s := p.entries[i].Slots
	return s != nil && s.Next(t.Add(-time.Nanosecond)).Equal(t)
}

// earned is the entry's credit at slot: what it kept at the slot it was
// last asked at, or nothing from a pass counted after that slot (another
// process's, a catch-up's), and the time since over its cadence.
func (p *Pacer) earned(i int, slot time.Time) float64 {
	from, credit, asked := p.kept(i, p.onSlot(i, slot))
	every := p.every(i)
	switch {
	case every == Never:
		return min(credit, 1-1e-6)
	case !asked:
		return 1
	case every <= 0 || !slot.After(from):
		return credit
	}
	return min(credit, 1) + min(float64(slot.Sub(from))/float64(every), 1)
}

// kept is what the entry earns from, asked from a slot or not (counted):
// the time and the credit it had then; asked is false when it has neither
// been asked nor run. A pass that started within a grain after an ask at
// a slot is that slot's, however late it started, with the credit the
// slot left; after a catch-up's ask, seen from a slot, it counts as its
// recorded start does, as a restarted pacer counts it. A pass counted
// after the ask (another process's) is earned from with nothing kept.
func (p *Pacer) kept(i int, slotted bool) (from time.Time, credit float64, asked bool) {
	name := p.entries[i].Name
	from, asked = p.asked[name]
	credit = p.credit[name]
	done, ok := p.last[name]
	if !ok || p.every(i) <= 0 {
		return from, credit, asked
	}
	at := p.counted(i, done, slotted)
	ours := asked && !done.Before(from) && done.Sub(from) < p.grain(i)
	switch {
	case !asked:
		return at, 0, true
	case ours && p.onSlot(i, from):
		return from, credit, true
	case ours && slotted:
		return at, credit, true
	case at.After(from):
		return at, 0, true
	}
	return from, credit, true
}

// dueFrom is the time from which the entry will have earned a pass, not
// before the plan; zero when it cannot run.
func (p *Pacer) dueFrom(i int) time.Time {
	every := p.every(i)
	if every == Never {
		return time.Time{}
	}
	from, credit, asked := p.kept(i, false)
	if !asked || every <= 0 || credit >= 1-1e-9 {
		return p.planAt
	}
	return latest(p.planAt, from.Add(time.Duration((1-credit)*float64(every))))
}

// every is the entry's planned cadence: its floor before the first plan
// (the limiter has not answered), as without pacing; the limiter still
// decides every call.
func (p *Pacer) every(i int) time.Duration {
	if every, ok := p.plan.Every[p.entries[i].Name]; ok {
		return every
	}
	return p.entries[i].Floor
}

// fits reports whether the pools hold a pass of the entry now. When they
// seem not to, the limiter is asked again: room freed since the plan.
func (p *Pacer) fits(ctx context.Context, i int) bool {
	if p.planAt.IsZero() || p.hasRoom(i) {
		return true
	}
	if states, err := p.cfg.State(ctx); err == nil {
		p.roomOf(states)
	}
	return p.hasRoom(i)
}

// hasRoom reports whether the pools hold a pass of the entry now. An
// entry below level 0 also leaves room for a round of the level 0 entries
// the plan keeps: a category chart never takes what a region's own chart
// needs next.
func (p *Pacer) hasRoom(i int) bool {
	e := p.entries[i]
	for pool, c := range e.Cost {
		need := c
		if e.Priority > 0 {
			need += p.top[pool]
		}
		if r, ok := p.room[pool]; ok && need > r+1e-9 {
			return false
		}
	}
	return true
}

// topRound is what one pass of each level 0 entry the plan keeps costs, by
// pool.
func (p *Pacer) topRound() map[string]float64 {
	out := map[string]float64{}
	for _, e := range p.entries {
		if e.Priority > 0 || p.plan.Every[e.Name] == Never {
			continue
		}
		for pool, c := range e.Cost {
			out[pool] += c
		}
	}
	return out
}

// group is a set of entries whose passes keep to one planned rate
// together (spread): a level, and within it a tier, so that a tier's
// passes never wait for a higher tier's.
type group struct{ level, tier int }

// none is the group of an entry that keeps its slots.
var none = group{level: -1}

// spreads is the entry's group: its tier of the levels below level 0, or
// of the regions' own charts the plan stretched beyond their floors; none
// for a chart at its floor, which keeps its slots.
func (p *Pacer) spreads(i int) group {
	e := p.entries[i]
	switch every := p.plan.Every[e.Name]; {
	case every == Never || every <= 0 || e.Floor <= 0:
		return none
	case e.Priority > 0:
		return group{1, max(e.Tier, 1)}
	case every > e.Floor:
		return group{0, max(e.Tier, 1)}
	}
	return none
}

// groupRates is what the plan spends in each pool, in units a second, by
// group (spreads).
func (p *Pacer) groupRates() map[group]map[string]float64 {
	out := map[group]map[string]float64{}
	for i, e := range p.entries {
		if g := p.spreads(i); g != none {
			if out[g] == nil {
				out[g] = map[string]float64{}
			}
			for pool, c := range e.Cost {
				out[g][pool] += c / p.plan.Every[e.Name].Seconds()
			}
		}
	}
	return out
}

// spread reports whether a pass keeps its group (spreads) within its
// planned rate over the entry's floor, and one pass: the category charts
// of one cadence, due at once, then run one after another over the hours
// instead of in one burst, and so do the regions' own charts the plan
// stretched (a pool that cannot hold them at their floors). What they
// spent is read from their last passes, so a run --once and a restart
// count it. A region's own chart that would pass its staleness bound
// before its next slot runs whatever its group spent: the bound is a
// promise, the spread a smoothing.
func (p *Pacer) spread(i int, at time.Time) bool {
	e, g := p.entries[i], p.spreads(i)
	if g == none || p.bounded(i, at) {
		return true
	}
	since := at.Add(-e.Floor)
	for pool, c := range e.Cost {
		rate := p.rates[g][pool]
		if c <= 0 || rate <= 0 {
			continue
		}
		spent := 0.0
		for j, o := range p.entries {
			last, ok := p.last[o.Name]
			if slot, busy := p.running[o.Name]; busy {
				last, ok = slot, true
			}
			last = p.inGrain(j, last) // a start a little after its slot, or a cron's, is in that slot's floor
			if p.spreads(j) == g && ok && last.After(since) && !last.After(at) {
				spent += o.Cost[pool]
			}
		}
		// One pass over the planned rate is the slack the plan keeps: a
		// pass's recorded start and its slot may both fall in one floor.
		// The regions' own charts keep one more: each has one slot a
		// floor, and a pass held back there waits a whole floor.
		allow := max(rate*e.Floor.Seconds(), c)
		if g.level == 0 {
			allow = rate*e.Floor.Seconds() + c
		}
		if spent > allow+1e-9 {
			return false
		}
	}
	return true
}

// bounded reports whether the entry, a region's own chart, would pass its
// staleness bound (Entry.Limit) if it waited from at to its next slot.
func (p *Pacer) bounded(i int, at time.Time) bool {
	e := p.entries[i]
	if e.Priority > 0 || e.Slots == nil {
		return false
	}
	from, _, asked := p.kept(i, true)
	return asked && !from.IsZero() && e.Slots.Next(at).Sub(from) > e.Limit(p.cfg.Bound)
}

// take counts a granted pass against the room until the limiter is read
// again.
func (p *Pacer) take(i int) {
	for pool, c := range p.entries[i].Cost {
		if _, ok := p.room[pool]; ok {
			p.room[pool] -= c
		}
	}
}

// roomOf is what each pool holds now for this worker: half of it when
// another worker spends there.
func (p *Pacer) roomOf(states []ingest.PoolState) {
	now := p.now()
	for _, st := range states {
		pool, ok := p.pool(st.Pool)
		if !ok {
			continue
		}
		share := 1.0
		if others(st, pool.Window, now, p.mine[st.Pool]) > 0 {
			share = 0.5
		}
		p.room[st.Pool] = share * float64(st.Remaining)
	}
}

// Ran tells the pacer how a pass of the entry ended: what it spent, by
// pool, and its status. A completed pass is a cost measure; a pass dearer
// than planned, an entry's first, or one stopped for want of quota makes
// the plan again at once; the plan is published after every pass.
func (p *Pacer) Ran(name string, units map[string]int64, status ingest.RunStatus) {
	p.mu.Lock()
	defer p.mu.Unlock()
	now := p.now()
	if p.cfg.History == nil {
		for pool, u := range units {
			if u > 0 {
				p.mine[pool] = append(p.mine[pool], Spent{At: now, Units: u})
			}
		}
	}
	i, ok := p.index[name]
	if !ok {
		return
	}
	slot, granted := p.running[name]
	delete(p.running, name)
	switch status {
	case ingest.StatusStopped:
		p.stale = "a pass was stopped for want of quota"
	case ingest.StatusCompleted:
		if !granted {
			slot = now
		}
		if slot.After(p.last[name]) {
			p.last[name] = slot
		}
		p.measured(i, units)
	}
	switch {
	case p.stale != "" && !p.planAt.IsZero():
		p.replan(context.Background()) // and publishes
	case granted && p.cfg.Publish != nil && !p.planAt.IsZero():
		p.cfg.Publish(context.Background(), p.status())
	}
}

// measured records a completed pass's cost and re-plans when it was dearer
// than the plan thought, or the entry's first: a guess is not kept longer
// than one pass.
func (p *Pacer) measured(i int, units map[string]int64) {
	e := &p.entries[i]
	got := map[string]float64{}
	for pool, u := range units {
		got[pool] = float64(u)
		if float64(u) > e.Cost[pool]*dearer {
			p.stale = "a pass cost more than planned"
		}
	}
	if len(p.recent[e.Name]) == 0 && p.stale == "" {
		p.stale = "an entry's first pass was measured"
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
	case p.cfg.Refresh > 0 && now.Sub(p.planAt) >= p.cfg.Refresh:
		why = "refresh"
	default:
		return
	}
	if p.cfg.History != nil {
		p.load(ctx, now)
	}
	states, err := p.cfg.State(ctx)
	if err != nil {
		p.logger().Warn("pace: the limiter did not answer; keeping the plan", ingest.LogErr, err)
		return
	}
	p.make(states, now)
	p.stale = ""
	p.logger().Debug("pace: planned", "why", why, "until", p.until)
	if p.cfg.Publish != nil {
		p.cfg.Publish(ctx, p.status())
	}
}

// load reads the worker's own spend from its database, and at the first
// plan each entry's last pass and measured cost.
func (p *Pacer) load(ctx context.Context, now time.Time) {
	h, err := p.cfg.History(ctx, now)
	if err != nil {
		p.logger().Warn("pace: read this worker's history; planning with what it saw", ingest.LogErr, err)
		return
	}
	for _, pool := range p.cfg.Pools {
		p.mine[pool.Name] = h.Spent[pool.Name]
	}
	for name, at := range h.Last {
		if at.After(p.last[name]) {
			p.last[name] = at
		}
	}
	for i, e := range p.entries {
		if c, ok := h.Cost[e.Name]; ok && len(c) > 0 {
			p.entries[i].Cost = c
			if len(p.recent[e.Name]) == 0 {
				// measured by earlier processes: not a guess
				p.recent[e.Name] = []map[string]float64{c}
			}
		}
	}
}

// make plans from the limiter's states at now.
func (p *Pacer) make(states []ingest.PoolState, now time.Time) {
	p.budgets = p.budgets[:0]
	p.until = time.Time{}
	shared := false
	for _, st := range states {
		pool, ok := p.pool(st.Pool)
		if !ok {
			continue
		}
		p.mine[st.Pool] = trim(p.mine[st.Pool], now.Add(-pool.Window))
		shared = shared || others(st, pool.Window, now, p.mine[st.Pool]) > 0
		slack := Slack(pool, p.entries) + p.cfg.Daily[st.Pool]*pool.Window.Hours()/24
		b := BudgetOf(st, pool, now, p.mine[st.Pool], slack)
		p.budgets = append(p.budgets, b)
		if end := now.Add(b.Horizon); p.until.IsZero() || end.Before(p.until) {
			p.until = end
		}
	}
	if shared != p.shared && !p.planAt.IsZero() {
		msg := "pace: another worker spends on the quota key; counting on half of each pool"
		if !shared {
			msg = "pace: no other worker's spend is left in the window; counting on whole pools"
		}
		p.logger().Info(msg)
	}
	p.shared = shared
	p.states = states
	p.roomOf(states)
	old := p.plan.Dropped
	p.plan, p.planAt = p.hold(Make(p.budgets, p.entries, p.cfg.Bound), old, now), now
	p.top, p.rates = p.topRound(), p.groupRates()
	p.logChange(old)
}

// hold keeps a region's own chart dropped that the plan before dropped
// (old), the plans took back within the pools' longest window and dropped
// since, until the plans have kept it for that window on end: the pools'
// room moves a little with what leaves their window and with the day's
// length, and a chart taken back at the first plan that holds it would
// be dropped again at the next, in and out of the plan, older than the
// bound each time it is back. A chart dropped once (a start that spent
// the window) comes back at the first plan that keeps it; a plan that
// drops a chart drops it at once.
func (p *Pacer) hold(plan Plan, old map[string]bool, now time.Time) Plan {
	var window time.Duration
	for _, pl := range p.cfg.Pools {
		window = max(window, pl.Window)
	}
	held := map[string]bool{}
	for _, e := range p.entries {
		since, waits := p.back[e.Name]
		switch last, ok := p.returned[e.Name]; {
		case e.Priority > 0 || !old[e.Name] || plan.Dropped[e.Name]:
			delete(p.back, e.Name)
		case !waits && (!ok || now.Sub(last) >= window):
			p.returned[e.Name] = now
		case !waits:
			p.back[e.Name], held[e.Name] = now, true
		case now.Sub(since) < window:
			held[e.Name] = true
		default:
			delete(p.back, e.Name)
			p.returned[e.Name] = now
		}
	}
	if len(held) == 0 {
		return plan
	}
	return makeHeld(p.budgets, p.entries, p.cfg.Bound, held)
}

// logChange says, in one line, which entries the new plan drops that the
// one before kept, and which it takes back: nothing when neither.
func (p *Pacer) logChange(old map[string]bool) {
	var dropped, back []string
	for _, e := range p.entries {
		switch now := p.plan.Dropped[e.Name]; {
		case now && !old[e.Name]:
			dropped = append(dropped, e.Name)
		case !now && old[e.Name]:
			back = append(back, e.Name)
		}
	}
	if len(dropped) > 0 {
		p.logger().Warn("pace: the plan drops what the budget cannot hold beside the entries above it",
			"dropped", len(dropped), "entries", names(dropped), "back", len(back), "kept", len(p.entries)-len(p.plan.Dropped))
	} else if len(back) > 0 {
		p.logger().Info("pace: the plan takes back entries it dropped", "back", len(back), "entries", names(back))
	}
}

// names is a list of entries as a log line shows it: the first few, and
// how many more.
func names(list []string) string {
	const shown = 8
	if len(list) <= shown {
		return strings.Join(list, ",")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(list[:shown], ","), len(list)-shown)
}

func (p *Pacer) pool(name string) (ingest.Pool, bool) {
	for _, pl := range p.cfg.Pools {
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

// Slack is the room a plan of whole passes needs in the pool over its
// average: an entry that runs less often than at each of its slots can
// fall twice in one window where its average says once, so one pass of
// each entry below level 0, and of the dearest at level 0, is kept out of
// the sustainable rate. It is never more than a tenth of the capacity.
func Slack(pool ingest.Pool, entries []Entry) float64 {
	var below, top float64
	for _, e := range entries {
		c := e.Cost[pool.Name]
		if e.Priority > 0 {
			below += c
		} else {
			top = max(top, c)
		}
	}
	return min(below+top, float64(pool.Capacity())/10)
}

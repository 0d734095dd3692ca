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
	// LastPass, when set, reads when an entry's latest completed pass
	// started in the database, asked at each of its slots: a pass another
	// process on the database ran counts as this one's, so that two
	// daemons on one database (PostgreSQL, several hosts) run each entry
	// at its cadence between them rather than each at its own.
	LastPass func(ctx context.Context, name string) (time.Time, error)
	// Daily is what the worker spends a day outside its entries' passes,
	// by pool (the category names each region's first pass of a day
	// reads): kept out of the rate.
	Daily map[string]float64
	// Publish, when set, is given every plan the pacer makes.
	Publish func(ctx context.Context, st Status)
	// Clock is the house's, required: the plan's days, slots and credit
	// are read on it, as the limiter's window and the jobs' stamps are.
	Clock  ingest.Clock
	Logger *slog.Logger // slog.Default when nil
	// Refresh is the longest a plan is kept without an event, as the
	// slots' asks see it: other workers' spend shows only when the state
	// is read again. A worker joining or leaving a pool is the daemon's
	// look's (Look), which does not wait for a slot.
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
	last    map[string]time.Time // each entry's latest completed pass
	running map[string]time.Time // entries granted a pass not yet ended, by slot
	// before is each running entry's ask and credit as they were before
	// its grant: what a pass that spent nothing gives back (Ran).
	before map[string]ask
	mine   map[string][]Spent           // by pool
	short  map[string][]Spent           // by pool: what stopped runs wanted beyond their spend (History.Short)
	room   map[string]float64           // what the pools hold now, less the passes granted since
	fresh  bool                         // room was read from the limiter in this ask (fits)
	top    map[string]float64           // a round of the level 0 entries, by pool
	rates  map[group]map[string]float64 // what the plan spends by group (spreads), units a second, by pool
	back   map[string]time.Time         // since when the plans keep each entry held dropped (hold)
	// returned is when the plan last took each entry back (hold).
	returned map[string]time.Time
	states   []ingest.PoolState
	regions  map[string]bool // the regions of the entries' charts (beside)
	// workers is, by pool, how many workers the plan found spending in
	// its window, this one included (share).
	workers map[string]int
	// declined counts the slots each entry was declined at, by reason.
	declined map[string]map[Declined]int
	// told is, by entry, why its last slot declined at info was: a run of
	// declines for one reason is said once, until the entry runs.
	told map[string]Declined
	// shortAt is, by entry, the slot its last ask was declined at for want
	// of room alone (WaitsForRoom).
	shortAt map[string]time.Time
	plan    Plan
	budgets []Budget
	planAt  time.Time
	until   time.Time // the plan's horizon ends: the reset, or a block's end
	stale   string    // why the next call re-plans; "" none
}

// New returns a pacer of c, or an error naming the field of c that is
// missing or wrong.
func New(c Config) (*Pacer, error) {
	if err := c.check(); err != nil {
		return nil, fmt.Errorf("pace: %w", err)
	}
	p := &Pacer{cfg: c, entries: c.Entries, index: map[string]int{},
		recent: map[string][]map[string]float64{}, credit: map[string]float64{},
		asked: map[string]time.Time{}, last: map[string]time.Time{}, running: map[string]time.Time{}, before: map[string]ask{},
		mine: map[string][]Spent{}, short: map[string][]Spent{}, room: map[string]float64{}, back: map[string]time.Time{}, returned: map[string]time.Time{}, stale: "start",
		workers: map[string]int{}, declined: map[string]map[Declined]int{}, told: map[string]Declined{}, shortAt: map[string]time.Time{}}
	p.regions = map[string]bool{}
	for i, e := range c.Entries {
		p.index[e.Name] = i
		region, _, _ := strings.Cut(e.Name, "/")
		p.regions[region] = true
	}
	return p, nil
}

func (c Config) check() error {
	switch {
	case len(c.Pools) == 0:
		return errors.New("Config.Pools: no pool to pace")
	case c.State == nil:
		return errors.New("Config.State: required")
	case c.Clock == nil:
		return errors.New("Config.Clock: required, the house's clock")
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

func (p *Pacer) now() time.Time { return p.cfg.Clock.Now() }

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
// it missed, and its pass is the next slot's (counted). An entry with a pass under way is not
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
	p.fresh = false
	p.forgetAhead()
	p.replan(ctx)
	p.ranElsewhere(ctx, name)
	c, slotted := p.earned(i, slot), p.onSlot(i, slot)
	bound := slotted && p.bounded(i, slot)
	if bound {
		c = max(c, 1) // the bound is a promise; the cadence and the spread a smoothing
	}
	if c < 1-1e-9 && !slotted {
		// An ask off the slots (a catch-up, a cron's) that does not run
		// keeps nothing: the entry's next slot earns from its last pass,
		// as a restarted pacer's does.
		return false
	}
	was := ask{credit: p.credit[name]}
	was.at, was.asked = p.asked[name]
	p.asked[name] = latest(slot, p.counted(i, p.last[name], slotted))
	short, again := p.shortAt[name]
	again = again && short.Equal(slot)
	delete(p.shortAt, name)
	if c < 1-1e-9 {
		p.credit[name] = c
		p.decline(i, slot, p.unearned(i, slot))
		return false
	}
	// the spread before the room: a slot the plan holds back is held back
	// whatever room the pools have, so it is said so, and it does not
	// wait at its slot for room (WaitsForRoom) to be held back again
	if !bound && !(slotted && p.pastCadence(i, slot)) && !p.spread(i, slot) {
		p.credit[name] = 1
		p.decline(i, slot, DeclinedSpread)
		return false
	}
	if !p.fits(ctx, i) {
		p.credit[name] = 1
		p.shortAt[name] = slot
		if !again { // asked again while it waits at the slot: one slot declined
			p.decline(i, slot, DeclinedNoRoom)
		}
		return false
	}
	p.credit[name] = c - 1
	if !slotted {
		p.credit[name] = 0 // a catch-up is the next slot's pass (counted), with nothing kept
	}
	p.running[name] = slot
	delete(p.told, name)
	p.before[name] = was
	p.take(i)
	return true
}

// WaitsForRoom reports whether the entry's last ask was declined for
// want of room alone: its credit is whole and it keeps to the plan, so
// asking its slot again once the pools free its pass runs it there.
func (p *Pacer) WaitsForRoom(name string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	_, ok := p.shortAt[name]
	return ok
}

// ask is an entry's last ask and the credit it kept there (Due).
type ask struct {
	at     time.Time
	asked  bool
	credit float64
}

package jobs

import (
	"context"
	"fmt"
	"sort"
	"sync"
	"time"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/clock"
	"github.com/ingestworks/ingest/regions"
)

// Kind is what an entry of the daemon's schedule runs. Kinds are numbered
// in priority order, highest first: a region's own chart, a category's
// chart, the refresh of kept videos (refresh.go), tracking, pruning; a
// catch-up at start runs them in that order, and a Pacer that spreads a
// budget serves a lower Kind first.
type Kind int

const (
	KindChart Kind = iota
	KindCategoryChart
	KindRefresh
	KindTracking
	KindPrune
)

func (k Kind) String() string {
	switch k {
	case KindChart:
		return "chart"
	case KindCategoryChart:
		return "category chart"
	case KindTracking:
		return "tracking"
	case KindPrune:
		return "prune"
	case KindRefresh:
		return "refresh"
	}
	return fmt.Sprintf("Kind(%d)", int(k))
}

// noun is what the logs call a run of the kind.
func (k Kind) noun() string {
	if k.charts() {
		return "pass"
	}
	return k.String()
}

// charts says whether the kind is a chart pass, which the store keeps runs of.
func (k Kind) charts() bool { return k == KindChart || k == KindCategoryChart }

// Entry is one job of the daemon's schedule, or one run --once makes.
type Entry struct {
	// Name is stable and unique in a schedule: the chart (US, US/10),
	// "track" or "prune". Leases, logs and metrics go by it.
	Name string
	Kind Kind
	// Slots is the entry's staggered schedule: the times it may run at (a
	// Pacer decides whether it does), and what a catch-up at start asks:
	// whether the latest slot passed without a run.
	Slots Schedule
	// Tier is a chart's region's tier (regions.Chart), 1 for every other
	// entry: the plan's floor for it is Tier x its period.
	Tier int
	// Pages is how many pages a chart pass reads at most (its region's
	// depth); zero to the chart's end.
	Pages int
	// run runs the entry for slot: zero when no slot started it (run
	// --once, a catch-up at start).
	run func(ctx context.Context, slot time.Time) Ended
}

// Log keys of the schedule's entries: a chart's runs log its region key,
// the others their name under logJob.
const (
	logJob  = "job"
	logKind = "kind"
)

func (e Entry) logKey() string {
	if e.Kind.charts() {
		return ingest.LogRegion
	}
	return logJob
}

// Ended is how one run of an entry ended, as the daemon logs and observes
// it.
type Ended struct {
	ingest.RunEnd
	Err error // set when Status is failed
	// Fatal: no other chart can succeed either (the key is rejected, or the
	// upstream cannot be reached at all).
	Fatal bool
	// Message is the run's LogEnd line, which each kind states for
	// itself; the kind's noun when empty.
	Message string
	// Did is what the run did, as LogEnd's key-value pairs.
	Did []any
	// Pass is a chart pass's own result; nil for other kinds.
	Pass *PassResult
	// Units is what the run's calls were charged, by pool (calls given
	// back are not in it): a chart pass's and tracking's; nil for a run
	// that spends no quota.
	Units map[string]int64
	// Daily is the part of Units outside the pass's own cost (Outcome's
	// Daily): what pacing measures a pass at leaves it out.
	Daily map[string]int64
	// Gone is how many videos a refresh found the upstream no longer
	// returns, and deleted.
	Gone int64
	// Again: the run retried its slot after a try the limiter could not
	// decide (retry.go). Its failure is the same slot failing again, not
	// one more failure in a row.
	Again bool
}

// Roster is what a daemon runs and how often: the Runner's chart passes,
// tracking, pruning and the refresh. A pacer is planned from its entries
// before the Daemon that holds both is built.
type Roster struct {
	Runner *Runner
	Every  time.Duration // the charts' and pruning's period
	// Track, when set, runs every TrackEvery after the period's chart passes.
	Track      *Track
	TrackEvery time.Duration
	// Prune, when set, runs once a period, and at start.
	Prune *Prune
	// Refresh, when set, runs once a period, after the charts (refresh.go).
	Refresh *Refresh
}

// Daemon runs every entry of its Roster at its slots on the house clock
// (fire), until the Runner's Drain closes; then it waits for
// the runs in flight. Each run goes through the Runner: in-process guard,
// lease, the LogEnd line, Observe. A Daemon is complete as built: nothing
// of it is set afterwards.
type Daemon struct {
	Roster
	// LastStart holds the charts' latest starts in the store: a chart whose
	// latest slot passed without one runs once at start.
	LastStart map[string]time.Time
	// Pacer, when set, decides at each of an entry's slots, and at the
	// catch-up at start (asked at the time it runs), whether the entry runs
	// there; it is told how every run it allowed ended, and asked once a
	// period to look at the limiter (Look). Nil runs every slot, and at start every
	// entry whose latest slot passed without a run.
	Pacer Pacer
	// Spent is what the run took before its passes on their behalf, by
	// pool (the region catalogue): run --once's summary counts it.
	Spent map[string]int64
}

// Entries lists the roster's entries, the chart passes in the order
// they are staggered, then tracking, then pruning.
func (d *Roster) Entries() ([]Entry, error) {
	n := len(d.Runner.Passes)
	var out []Entry
	for i, p := range d.Runner.Passes {
		s, err := chartSlots(regions.Chart{Code: p.Region, Tier: p.Tier}, d.Every, i, n)
		if err != nil {
			return nil, err
		}
		e := p.Entry()
		e.Slots = s
		out = append(out, e)
	}
	if d.Track != nil {
		if d.TrackEvery < MinEvery {
			return nil, fmt.Errorf("--track-every: must be at least %s, got %s", MinEvery, d.TrackEvery)
		}
		e := d.Track.Entry()
		e.Slots = regions.AfterCharts(d.TrackEvery, n, 2)
		out = append(out, e)
	}
	if d.Prune != nil {
		e := d.Prune.Entry()
		e.Slots = regions.AfterCharts(d.Every, n, 4)
		out = append(out, e)
	}
	if d.Refresh != nil {
		e := d.Refresh.Entry()
		e.Slots = regions.AfterCharts(d.Every, n, 3)
		out = append(out, e)
	}
	return out, nil
}

// Pacer decides whether an entry runs at one of its slots.
type Pacer interface {
	// Due reports whether the entry runs at slot, and if so counts it.
	Due(ctx context.Context, name string, slot time.Time) bool
	// Ran is how a run Due allowed ended: what it spent, by pool; the part
	// of that outside the pass's own cost (daily: the category names a
	// region's first pass of a day reads); and its status, "" when it did
	// not run after all (another process had it).
	Ran(name string, units, daily map[string]int64, status ingest.RunStatus)
	// Look is asked once a period, between the slots: the pacer reads the
	// limiter again and re-plans when a worker joined or left a pool, so
	// that a running daemon counts one within a period whatever its
	// entries' slots.
	Look(ctx context.Context)
	// WaitsForRoom reports whether the entry's last ask was declined for
	// want of room alone: the pools may hold its pass before its next
	// slot, and the slot is asked again meanwhile (waitForRoom).
	WaitsForRoom(name string) bool
}

// nexter is a Pacer that tells when an entry runs next by its plan
// (pace.Pacer.Next): the time report and /quota give as its next run.
type nexter interface {
	Next(ctx context.Context, name string) time.Time
}

// firstSlot is when e runs first: by the pacer's plan when it makes one,
// so that the log says what report and /quota say ("none" for an entry
// the plan dropped), else its next slot.
func (d *Daemon) firstSlot(ctx context.Context, e Entry) string {
	n, ok := d.Pacer.(nexter)
	if !ok {
		return e.Slots.Next(d.Runner.now()).Format(time.RFC3339)
	}
	if at := n.Next(ctx, e.Name); !at.IsZero() {
		return at.UTC().Format(time.RFC3339)
	}
	return "none"
}

// runPaced runs e for a's slot when the pacer (if any) allows it, and
// tells the pacer how it ended, all of it a run in flight the daemon's stop
// waits for. A chart pass the limiter could not decide is tried again
// within its slot (retry).
func (d *Daemon) runPaced(ctx context.Context, e Entry, a attempt, stop <-chan struct{}) bool {
	done, ok := d.Runner.hold()
	if !ok {
		return false // stopping: the daemon waits for nothing it has not started
	}
	defer done()
	asked := a.slot
	if a.catchUp {
		// The pacer is asked at the time the catch-up runs, not at the slot
		// it missed: its pass counts where it ran, and the entry's next
		// slot is not a second pass minutes later.
		asked = d.Runner.now()
	}
	end, ran, due := d.paced(ctx, e.Name, asked, func() (Ended, bool) { return d.Runner.runDue(ctx, e, a) })
	switch {
	case ran && undecided(e, end):
		d.retry(ctx, e, a, stop)
	case !due && !a.catchUp && e.Kind.charts() && d.Pacer.WaitsForRoom(e.Name):
		d.waitForRoom(ctx, e, a, stop)
	}
	return ran
}

// paced asks the pacer (if any) whether name runs at slot; if so it runs
// it and tells the pacer how the run ended ("" when it did not run after
// all: another process had it). due is false when the pacer said no.
func (d *Daemon) paced(ctx context.Context, name string, slot time.Time, run func() (Ended, bool)) (end Ended, ran, due bool) {
	if d.Pacer != nil && !d.Pacer.Due(ctx, name, slot) {
		return Ended{}, false, false
	}
	end, ran = run()
	if d.Pacer != nil {
		status := end.Status
		if !ran {
			status = ""
		}
		d.Pacer.Ran(name, end.Units, end.Daily, status)
	}
	return end, ran, true
}

// byPriority is the entries in the order a catch-up runs them: every
// region's own chart, then the category charts, then the rest, each kind
// in the schedule's order.
func byPriority(entries []Entry) []Entry {
	out := append([]Entry(nil), entries...)
	sort.SliceStable(out, func(i, j int) bool { return out[i].Kind < out[j].Kind })
	return out
}

// Run starts the daemon and returns once it has stopped: Drain closed (or
// ctx ended) and the runs in flight ended (ctx cancels them at once). At
// start, highest priority first, an entry whose latest slot passed without
// a run runs once (with a Pacer, one the pacer allows for that slot), except
// tracking, which waits for its slot after the charts.
func (d *Daemon) Run(ctx context.Context) error {
	entries, err := d.Entries()
	if err != nil {
		return err
	}
	r := d.Runner
	r.startDaemon(d.LastStart)
	stop := make(chan struct{}) // closed at the daemon's stop: the firings, the looks and the retries' waits end
	var firings sync.WaitGroup
	for _, e := range entries {
		r.Logger.Info("scheduled", e.logKey(), e.Name, logKind, e.Kind.String(), "first_slot", d.firstSlot(ctx, e))
		firings.Go(func() { d.fire(ctx, e, stop) })
	}
	looked := make(chan struct{}) // awaited: a look publishes a plan in the database
	go func() {
		defer close(looked)
		d.look(ctx, stop)
	}()
	caughtUp := make(chan struct{}) // awaited: nothing of the daemon logs after it returns
	go func() {
		defer close(caughtUp)
		ran := 0
		for _, e := range byPriority(entries) {
			if stopping(r.Drain) {
				return
			}
			if e.Kind != KindTracking && d.runPaced(ctx, e, attempt{slot: e.Slots.Prev(r.now()), catchUp: true}, stop) {
				ran++
			}
		}
		r.Logger.Info("start: caught up the entries whose latest slot passed without a run", "ran", ran, "entries", len(entries))
	}()
	var end error
	select {
	case <-r.Drain:
	case <-ctx.Done():
	case end = <-r.ending():
	}
	close(stop)
	firings.Wait()
	r.wait(ctx)
	<-caughtUp
	<-looked
	return end
}

// look asks the pacer (if any) to look at the limiter once a period until
// stop closes (Pacer.Look): the slots alone may leave its plan for longer.
func (d *Daemon) look(ctx context.Context, stop <-chan struct{}) {
	if d.Pacer == nil || d.Every <= 0 {
		return
	}
	tick := clock.NewTicker(d.Every)
	defer tick.Stop()
	for {
		select {
		case <-stop:
			return
		case <-ctx.Done():
			return
		case <-tick.C:
			d.Pacer.Look(ctx)
		}
	}
}

// fire runs e at each of its slots, as the house clock reads them, until
// stop closes. It waits on the runtime's timer for the span the clock
// gives to the next slot; woken, it starts the latest slot the clock has
// reached in its own goroutine (a run that outlasts a period does not hold
// the next slot; the Runner's guard skips it) and waits for the one after.
// A clock stepped back finds its slot not reached and waits again, so that
// no slot fires twice; one stepped ahead skips, at its next wake, the
// slots it stepped over, as a host that was asleep would.
func (d *Daemon) fire(ctx context.Context, e Entry, stop <-chan struct{}) {
	next := e.Slots.Next(d.Runner.now())
	for {
		t := clock.NewTimer(clock.Until(d.Runner.Clock, next))
		select {
		case <-t.C:
		case <-stop:
			t.Stop()
			return
		}
		now := d.Runner.now()
		if now.Before(next) {
			continue
		}
		slot := e.Slots.Prev(now)
		go d.runPaced(ctx, e, attempt{slot: slot}, stop)
		next = e.Slots.Next(slot)
	}
}

// Floors is each chart entry's shortest cadence, its slots' period: what
// /metrics shows as its planned cadence when nothing paces.
func (d *Roster) Floors() map[string]time.Duration {
	out := map[string]time.Duration{}
	es, _ := d.Entries()
	for _, e := range es {
		if e.Kind == KindChart || e.Kind == KindCategoryChart {
			out[e.Name] = e.Slots.Every
		}
	}
	return out
}

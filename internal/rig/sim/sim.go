// Package sim runs the whole daemon on virtual time: `ingest run` built
// by wiring's own builder, with only its edges swapped (the fake upstream
// answering in process, a boot clock that follows the virtual one), inside
// a testing/synctest bubble where time.Now, the timers and robfig/cron's
// schedule are virtual, so that days of the process pass in seconds. A
// nemesis drawn from a seed restarts the process on the same database,
// sends it SIGTERM while a chart page is on the wire, has a second process
// join its quota key (run --once beside it), fills the disk under its
// database for a while and makes the upstream fail in bursts and
// truncate answers; the checker (check.go) then reads the
// whole history from the fake's charges and the database, never from the
// process's own account of itself (docs/testing/simulation.md).
package sim

import (
	"context"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync/atomic"
	"time"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/internal/rig/fakeyt"
	"github.com/ingestworks/ingest/jobs"
	"github.com/ingestworks/ingest/regions"
	"github.com/ingestworks/ingest/store"
	"github.com/ingestworks/ingest/wiring"
)

// Config is one simulation: the daemon's shape, where and how long on the
// virtual calendar, and the seed its nemesis is drawn from.
type Config struct {
	Shape
	Seed  uint64
	Start time.Time // when the first process starts (the bubble sleeps to it)
	Days  int
	// Nemesis draws restarts and upstream failures from Seed; without it
	// the process runs once, undisturbed.
	Nemesis bool
	Dir     string // the database and the daemon's log
	// Exhaust says the workload is meant to reach the default pool's
	// limit: a history that never did exercised nothing of the limiter.
	Exhaust bool
	// Latency is how long the upstream takes to answer each call.
	Latency time.Duration
	// SlowStart has the upstream answer every request in slowAnswer for
	// this long from Start, then in Latency: a fresh database's first
	// start behind an upstream too slow for the clock's free request's
	// budget, whose calls still fit their bound (docs/explanation/redis.md).
	SlowStart time.Duration
	// Beside has a second process join the key without the nemesis: a
	// `run --once` beside the daemon for a while each day (besides).
	Beside bool
	// Readers serves the site on the daemon's --listen and has readers
	// ask it for charts through the simulation (readers.go).
	Readers bool
	// NoSearches has the readers read charts and never search: a day
	// measured beside an older tree asks its site what that tree's
	// readers asked.
	NoSearches bool
	// Restarts stop the process without the nemesis, this long after
	// Start each, and start it again shortly after: a long history's
	// process meets what it left in the database, as an upgrade's does.
	Restarts []time.Duration
	// Upgrades stop the process as Restarts do, and start it on its
	// database as a release before the terms' note left it (upgrade.go).
	Upgrades []time.Duration
	// Terms send the process SIGTERM without the nemesis, this long after
	// Start each, while a chart page is on the wire (held a few seconds,
	// within its bound), and start it again a minute later: the drain,
	// which the nemesis's draw may leave out of a short history.
	Terms []time.Duration
	// SkewedStarts set the upstream's Date an hour behind this long after
	// Start each, for skewFor, and stop the process skewStop into it for
	// a minute: a start that meets a wrong Date, which the nemesis's
	// moves, one at a time, never make.
	SkewedStarts []time.Duration
	// RedisLoss, on Redis, is how long after Start the Redis loses every
	// key once (FLUSHALL), as a restart without persistence does
	// (docs/contract.md: a loss stays a loss); after the nemesis's moves,
	// when it has any.
	RedisLoss time.Duration
	// RedisRollback, on Redis, is how long after Start (and after
	// RedisLoss) the Redis goes back to what it held rollbackAge before,
	// as a restart from an older snapshot or a failover to a replica that
	// lagged does: the limiter's state is there, older (rollback.go).
	RedisRollback time.Duration
	// PeerAt, on Redis, is how long after Start (and after RedisRollback) a
	// worker of another database joins the daemon's quota key for
	// peerFor: `run --once` of a chart the daemon does not run, on its own
	// SQLite file (redis.go).
	PeerAt time.Duration
	// RedisStalls, on Redis, is how many times its server stops for longer
	// than the limiter's timeout, at moments drawn from Seed (redis.go).
	RedisStalls int
	// RedisCuts, on Redis, is how many times the connection of a decision
	// is cut after the server ran it and before its reply came back, at
	// moments drawn from Seed (cut.go).
	RedisCuts int
	// LeaveRedis, on Redis with PeerAt, ends the history with a move of
	// the daemon's database off Redis at a peer's call (leave.go).
	LeaveRedis bool
	// Backfills run `ingest backfill` beside the daemon (backfill.go).
	Backfills []Backfill
	// CopyAt, when set, is how long after Start (and the nemesis's moves)
	// the daemon moves to a `db copy` of its database, for CopyFor, and
	// comes back (moved.go).
	CopyAt, CopyFor time.Duration
	// Operator serves the site on the daemon's --listen for the operator
	// alone, who reads /api/v1/quota as with Readers: a pool's free time
	// read while the limiter refuses, in a shape with no readers.
	Operator bool
}

// Interval is a span of the virtual calendar.
type Interval struct{ From, To time.Time }

// Contains reports whether t is in [From, To].
func (i Interval) Contains(t time.Time) bool { return !t.Before(i.From) && !t.After(i.To) }

// History is what the simulation leaves for the checker.
type History struct {
	Config
	End    time.Time
	Charts []regions.Chart // the configured charts, each with its tier
	Calls  []Call          // the fake's answers to keyed requests
	Runs   []Run           // the database's chart runs
	Passes []Pass          // the database's passes of the work with no run row
	Starts []time.Time     // a life of the process started
	Down   []Interval      // the process was stopped
	Terms  []Term          // the process was sent SIGTERM
	Joins  []Join          // a second process joined the key
	Fulls  []Interval      // the disk under the database was full
	Faults []Fault         // the upstream failed calls
	Served []Served        // what readers were answered
	Ledger []Entry         // the database's quota ledger
	// Unknowns are the decisions of unknown outcome the databases' ledgers
	// keep at the end (check_unknown.go).
	Unknowns []Unknown
	Plans    []PlanRead // the plans readers read, one a life of the process
	Copies   []Copy     // a db copy's looks beside each life (copies.go)
	// Forgotten are the videos the upstream forgot; Tombstones, the
	// database's videos deleted as gone, by id, when (videos_gone).
	Forgotten  []Gone
	Tombstones map[string]time.Time
	// Orphans are the database's rows at the end whose parent row is gone,
	// each table's with its count ("trending_entries -> videos: 3"), as
	// SQLite's foreign_key_check finds them (check_orphans.go).
	Orphans []string
	Backups []time.Time // the scheduled backups left at the end, oldest first, by their names
	// Refusals are when the upstream refused every call as over its
	// daily quota; Skews when its Date header was wrong.
	Refusals, Skews []Interval
	// SkewBy is how far behind each of Skews had the Date (check_clock_said.go).
	SkewBy []time.Duration
	// Asks are when the upstream's time was asked at no quota cost.
	Asks   []time.Time
	Log    string      // the daemon's log file
	Losses []time.Time // the Redis lost its data (RedisLoss, RedisRollback)
	Looks  []Look      // the limiter's counts, lossLook after each loss
	Peers  []Join      // the joins of a worker of another database, in Joins too
	// Leaving is the move off Redis that ended the history (LeaveRedis).
	Leaving *Leave
	// Stalls are when the Redis stopped for stallFor (RedisStalls), or
	// did not answer a command within its deadline, or a decision's
	// connection was cut (RedisCuts).
	Stalls []time.Time
	// CutLooks are what the Redis counted from each cut's instant (cut.go).
	CutLooks []CutLook
	// Backfilled are the Backfills as they ran; SearchResults, when each
	// search result the database holds at the end was fetched.
	Backfilled    []Backfilled
	SearchResults []time.Time
	Moved         []Interval // the daemon ran on a copy of its database (CopyAt)
	Slow          []Interval // the upstream answered in slowAnswer (SlowStart)
	// Unreachable are when the upstream was cut off, every request refused
	// at dial; Unreached, the keyed requests refused then (unreached.go).
	Unreachable []Interval
	Unreached   []Call
	// Operator is what the operator read on /api/v1/quota (operator.go);
	// Before, `ingest report` on the host before the first start.
	Operator []OperatorRead
	Before   Before
	// After, `ingest report` on the host after the last life with the
	// built-in costs (check_recorded.go); Left, every file under Dir then
	// (check_left.go).
	After After
	Left  []string
	// Searched are the readers' searches (search_reads.go); Ranked, the
	// entries the database holds at the end for each run a reader was
	// served, by run, in rank order.
	Searched []Searched
	Ranked   map[int64][]Shown

	spans  []Interval         // the faults' spans, once read
	counts map[string][]int64 // each pool's window at each call, once read
}

// Term is a SIGTERM the nemesis sent: when, the chart page the upstream
// held on the wire at that moment (zero for none: the stop came between
// passes), how long it held it, and whether the database has that page,
// as it reads at the end.
type Term struct {
	At, Stopped time.Time // the signal, and the daemon's end after it
	Held        Held
	Hold        time.Duration
	Stored      bool
}

// Join is a second process on the daemon's database and quota key: from
// when to when it ran `run --once` for Region, and each run.
type Join struct {
	Interval
	Region string
	Runs   []JoinRun
}

// JoinRun is one `run --once` of a Join: when it ran, and its error.
type JoinRun struct {
	Interval
	Err error
}

// Fault is a burst of upstream failures: from At, the next Calls keyed
// calls fail (503, every other one a proxy's status in front: proxy.go;
// or a truncated answer).
type Fault struct {
	At    time.Time
	Calls int
}

// Run is one chart run as the database keeps it.
type Run struct {
	ID                      int64
	Region, Category        string
	Status                  ingest.RunStatus
	Started, Slot, Finished time.Time // Finished zero: still running
	Pages                   int       // the pages it stored
}

// Pass is one pass of tracking, the refresh or the prune as the
// database keeps it: Slot is the slot it ran for, zero for a catch-up.
type Pass struct {
	Entry         string
	Status        ingest.RunStatus
	Started, Slot time.Time
}

// Simulate runs c inside the caller's synctest bubble and returns its
// history. It fails when a life of the process ends with an error.
func Simulate(c Config) (*History, error) {
	if d := time.Until(c.Start); d > 0 {
		time.Sleep(d)
	}
	h := &History{Config: c, End: c.Start.Add(time.Duration(c.Days) * 24 * time.Hour), Log: filepath.Join(c.Dir, "daemon.log")}
	var err error
	if h.Charts, err = regions.Selection(c.Regions).Of(regions.Builtin); err != nil {
		return nil, err
	}
	logf, err := os.Create(h.Log)
	if err != nil {
		return nil, err
	}
	defer logf.Close()
	log := slog.New(slog.NewTextHandler(logf, &slog.HandlerOptions{Level: slog.LevelInfo}))
	up := NewUpstream(c.Seed, c.Costs)
	if c.moves() {
		up.Move(c.Seed)
	}
	up.Fake.SetLatency(c.Latency)
	if c.SlowStart > 0 {
		up.Fake.SetLatency(slowAnswer)
		h.Slow = append(h.Slow, Interval{time.Now(), time.Now().Add(c.SlowStart)})
		time.AfterFunc(c.SlowStart, func() { up.Fake.SetLatency(c.Latency) })
	}
	booted := time.Now()
	boot := func() (string, time.Duration, bool) { return "sim", time.Since(booted), true }
	dsn := filepath.Join(c.Dir, "ingest.db")
	if c.BackupEvery > 0 {
		if err := os.MkdirAll(backupDir(dsn), 0o755); err != nil {
			return nil, err
		}
	}
	besideLog, err := os.Create(filepath.Join(c.Dir, "beside.log"))
	if err != nil {
		return nil, err
	}
	defer besideLog.Close()
	second := func(region string, every time.Duration, until time.Time) []JoinRun {
		return beside(dsn, c.Shape, region, every, until, up, boot, slog.New(slog.NewTextHandler(besideLog, nil)))
	}
	var listen *pipes
	var p atomic.Pointer[process]
	type reads struct {
		served []Served
		plans  []PlanRead
		looks  []OperatorRead
		search []Searched
	}
	served := make(chan reads, 1)
	stopReading := func() {}
	if c.Readers || c.Operator {
		listen = &pipes{started: make(chan struct{}, 1)}
		ctx, cancel := context.WithCancel(context.Background())
		stopReading = cancel
		running := func() bool { return p.Load().running.Load() }
		looked := make(chan []OperatorRead, 1)
		go func() { looked <- operator(ctx, c.Seed, listen, running) }()
		go func() {
			var r reads
			if c.Readers {
				r.served, r.plans, r.search = readers(ctx, c.Seed, h.Charts, listen, running, !c.NoSearches)
			}
			r.looks = <-looked
			served <- r
		}()
	}
	h.Before = reportBefore(dsn, c.Shape, log)
	if c.Redis != "" {
		if err := applyNew(dsn, c.Shape, log); err != nil {
			stopReading()
			return nil, fmt.Errorf("quota apply --new: %w", err)
		}
	}
	rc, _ := c.RedisHook.(*RedisClock)
	if rc != nil {
		rc.stallAt(c.stallTimes(h.End))
	}
	type cutsLooked struct {
		looks []CutLook
		err   error
	}
	var cutLooks chan cutsLooked
	if rc != nil && c.RedisCuts > 0 {
		rc.cutAt(c.cutTimes(h.End))
		cutLooks = make(chan cutsLooked, 1)
		go func() {
			lks, err := lookAfterCuts(rc, c.Shape, c.RedisCuts, h.End)
			cutLooks <- cutsLooked{lks, err}
		}()
	}
	p.Store(start(dsn, c.Shape, up, boot, log, listen))
	h.Starts = append(h.Starts, time.Now())
	var cp copies
	cp.beside(dsn, p.Load(), h.End)
	backfilled, err := backfills(c, dsn, up, boot)
	if err != nil {
		stopReading()
		return nil, err
	}
	for _, ev := range c.nemesis(h.End) {
		time.Sleep(time.Until(ev.at))
		if err := ev.apply(h, p.Load(), up, second); err != nil {
			stopReading()
			return h, err
		}
		if ev.down > 0 {
			p.Store(start(dsn, c.Shape, up, boot, log, listen))
			h.Starts = append(h.Starts, time.Now())
			cp.beside(dsn, p.Load(), h.End)
		}
	}
	if c.CopyAt > 0 {
		err := h.move(&p, dsn, func(at string) {
			p.Store(start(at, c.Shape, up, boot, log, listen))
			h.Starts = append(h.Starts, time.Now())
			cp.beside(at, p.Load(), h.End)
		})
		if err != nil {
			stopReading()
			return h, err
		}
	}
	if c.RedisLoss > 0 {
		time.Sleep(time.Until(c.Start.Add(c.RedisLoss)))
		if err := flushRedis(c.Redis); err != nil {
			stopReading()
			return h, err
		}
		h.Losses = append(h.Losses, time.Now())
		time.Sleep(lossLook)
		lk, err := lookRedis(c.Shape, log)
		if err != nil {
			stopReading()
			return h, err
		}
		h.Looks = append(h.Looks, lk)
	}
	if c.RedisRollback > 0 {
		if err := h.rollback(log); err != nil {
			stopReading()
			return h, err
		}
	}
	if c.PeerAt > 0 {
		time.Sleep(time.Until(c.Start.Add(c.PeerAt)))
		j := peer(h, up, boot, besideLog)
		h.Joins, h.Peers = append(h.Joins, j), append(h.Peers, j)
	}
	time.Sleep(time.Until(h.End))
	if cutLooks != nil {
		lk := <-cutLooks
		if h.CutLooks = lk.looks; lk.err != nil {
			stopReading()
			return h, lk.err
		}
	}
	h.Copies, h.Backfilled = cp.looks(), backfilled()
	stopReading()
	if c.Readers || c.Operator {
		r := <-served
		h.Served, h.Plans, h.Operator, h.Searched = r.served, r.plans, r.looks, r.search
	}
	if c.LeaveRedis {
		lv, err := h.leaveRedis(p.Load(), dsn, up, boot, besideLog, log)
		if h.Leaving = &lv; err != nil {
			return h, err
		}
	} else if err := p.Load().stop(); err != nil {
		return h, fmt.Errorf("the daemon at %s: %w", time.Now().UTC().Format(time.RFC3339), err)
	}
	h.Calls, h.Forgotten, h.Asks, h.Unreached = up.Calls(), up.Forgotten(), up.Asks(), up.Refused()
	after := c.Shape
	if c.LeaveRedis { // the operator asks as the host now runs, off Redis
		after.Redis, after.RedisHook = "", nil
	}
	h.After, h.Left = reportAfter(dsn, after), leftIn(c.Dir)
	if rc != nil {
		h.Stalls = rc.stalls()
	}
	if c.BackupEvery > 0 {
		if h.Backups, err = backedUp(backupDir(dsn)); err != nil {
			return h, err
		}
	}
	if err = h.read(dsn); err != nil || c.PeerAt == 0 {
		return h, err
	}
	if err = h.readPeer(peerDSN(c.Dir)); err != nil || !c.LeaveRedis {
		return h, err
	}
	return h, h.readPeer(lastDSN(c.Dir))
}

// read is the history the database keeps: its chart runs and the other
// work's passes.
func (h *History) read(dsn string) error {
	ctx := context.Background()
	db, err := wiring.OpenExisting(ctx, dsn)
	if err != nil {
		return err
	}
	defer db.Close()
	if h.Runs, err = readRuns(ctx, db.DB); err != nil {
		return err
	}
	if h.Passes, err = readPasses(ctx, db.DB); err != nil {
		return err
	}
	if h.Ledger, err = readLedger(ctx, db.DB); err != nil {
		return err
	}
	if h.Unknowns, err = readUnknowns(ctx, db.DB, false); err != nil {
		return err
	}
	if h.Tombstones, err = readTombstones(ctx, db.DB); err != nil {
		return err
	}
	if h.Orphans, err = readOrphans(ctx, db.DB); err != nil {
		return err
	}
	if h.SearchResults, err = readSearchResults(ctx, db.DB); err != nil {
		return err
	}
	if h.Ranked, err = readRanked(ctx, db.DB, h.Served); err != nil {
		return err
	}
	for i := range h.Terms {
		if h.Terms[i].Stored, err = stored(ctx, db.DB, h.Terms[i].Held); err != nil {
			return err
		}
	}
	return h.readMoved()
}

// moves says the charts move in c: a history that reaches the refresh's
// age, which only charts that let videos go give work. Shorter ones keep
// the still charts: tracking the videos a moving chart brings in costs a
// third more CPU, and over days short of the age buys no check.
func (c Config) moves() bool { return time.Duration(c.Days)*24*time.Hour > ingest.RefreshAfter }

// event is one move of the nemesis.
type event struct {
	at     time.Time
	down   time.Duration // a restart: stopped this long
	fail   int           // a burst: the next fail calls answer 503, or a proxy's status (proxy.go)
	cut    int           // the next cut answers of 200 are truncated
	refuse time.Duration // the upstream answers every call 403 quotaExceeded this long
	skew   time.Duration // the upstream's Date header is this far behind, for skewFor
	// term, with down, is a SIGTERM while a chart page is on the wire:
	// the upstream holds the next page this long, and the signal comes
	// while it does (or after termWait with no page, between passes)
	term time.Duration
	// join: a second process runs `run --once` of a chart the daemon
	// does not run, every joinEvery, this long (the pick-th of them)
	join, joinEvery time.Duration
	pick            int
	full            time.Duration // the disk under the database is full this long (full.go)
	upgrade         bool          // with down: the database is left as an older release left it (upgrade.go)
}

// slowAnswer is how long a slow upstream takes to answer (SlowStart):
// past the budget of the clock's free request (fetch.ClockBudget), within
// a call's delivery bound (ingest.Delivery).
const slowAnswer = 12 * time.Second

// termHeld is how long the upstream holds the page a Terms SIGTERM meets:
// within the page's own bound, so that the drain stores it.
const termHeld = 5 * time.Second

// termWait is how long a SIGTERM waits for a chart page to be on the
// wire: the charts' staggered slots bring one every few minutes.
const termWait = time.Hour

// termBound is how long a daemon sent SIGTERM may take to stop: the page
// in flight's stop bound and a little (docs/operations.md, Signals).
const termBound = jobs.StopBound + 5*time.Second

// skewFor is how long the upstream's Date is wrong when the nemesis sets
// it so: a caching proxy's answers for a while.
const skewFor = 20 * time.Minute

func (ev event) apply(h *History, p *process, up *Upstream, second func(string, time.Duration, time.Time) []JoinRun) error {
	switch {
	case ev.full > 0:
		filled, err := fill(p.db.Load(), ev.full)
		if filled {
			h.Fulls = append(h.Fulls, Interval{ev.at, time.Now()})
		}
		return err
	case ev.join > 0:
		region := h.besideRegion(ev.pick)
		runs := second(region, ev.joinEvery, ev.at.Add(ev.join))
		h.Joins = append(h.Joins, Join{Interval{ev.at, time.Now()}, region, runs})
		return nil
	case ev.refuse > 0:
		up.Fake.ExhaustQuota(fakeyt.QuotaExceeded)
		h.Refusals = append(h.Refusals, Interval{ev.at, ev.at.Add(ev.refuse)})
		time.Sleep(ev.refuse)
		up.Fake.ExhaustQuota(fakeyt.QuotaOK)
		return nil
	case ev.skew > 0:
		up.Fake.SetClock(func() time.Time { return time.Now().Add(-ev.skew) })
		h.Skews, h.SkewBy = append(h.Skews, Interval{ev.at, ev.at.Add(skewFor)}), append(h.SkewBy, ev.skew)
		if ev.down > 0 {
			return ev.skewedStop(h, p, up)
		}
		time.Sleep(skewFor)
		up.Fake.SetClock(nil)
		return nil
	}
	if ev.fail > 0 || ev.cut > 0 {
		if ev.fail > 0 {
			up.Fake.FailNext(ev.fail, 503)
			up.Front(ev.fail)
			up.CutOff(cutFor)
			h.Unreachable = append(h.Unreachable, Interval{ev.at, ev.at.Add(cutFor)})
		} else {
			up.Fake.MalformNext(ev.cut)
		}
		h.Faults = append(h.Faults, Fault{ev.at, ev.fail + ev.cut})
		return nil
	}
	if ev.term > 0 {
		return ev.sigterm(h, p, up)
	}
	if err := p.stop(); err != nil {
		return fmt.Errorf("the daemon at %s: %w", ev.at.UTC().Format(time.RFC3339), err)
	}
	h.Down = append(h.Down, Interval{ev.at, ev.at.Add(ev.down)})
	if ev.upgrade {
		if err := unnote(filepath.Join(h.Dir, "ingest.db")); err != nil {
			return err
		}
	}
	time.Sleep(ev.down)
	return nil
}

// skewStop is how far into a wrong Date a SkewedStarts stop comes.
const skewStop = 5 * time.Minute

// skewedStop stops the process skewStop into the wrong Date ev set and
// keeps it down for ev.down; the caller starts it again inside the wrong
// Date, which is set right skewFor after it began.
func (ev event) skewedStop(h *History, p *process, up *Upstream) error {
	time.AfterFunc(skewFor, func() { up.Fake.SetClock(nil) })
	time.Sleep(skewStop)
	if err := p.stop(); err != nil {
		return fmt.Errorf("the daemon at %s: %w", time.Now().UTC().Format(time.RFC3339), err)
	}
	h.Down = append(h.Down, Interval{ev.at.Add(skewStop), ev.at.Add(skewStop + ev.down)})
	time.Sleep(ev.down)
	return nil
}

// sigterm has the upstream hold the next chart page on the wire, sends
// the daemon SIGTERM while it does, and keeps it down for ev.down.
func (ev event) sigterm(h *History, p *process, up *Upstream) error {
	var held Held
	wire := up.Hold(ev.term)
	select {
	case held = <-wire:
	case <-time.After(termWait):
		up.Unhold()
		select {
		case held = <-wire:
		default:
		}
	}
	at := time.Now()
	err := p.term(termBound)
	h.Terms = append(h.Terms, Term{At: at, Stopped: time.Now(), Held: held, Hold: ev.term})
	if err != nil {
		return fmt.Errorf("the daemon sent SIGTERM at %s: %w", at.UTC().Format(time.RFC3339), err)
	}
	h.Down = append(h.Down, Interval{at, at.Add(ev.down)})
	time.Sleep(ev.down)
	return nil
}

// stallTimes is when the Redis stops: RedisStalls moments drawn from
// Seed between Start and end.
func (c Config) stallTimes(end time.Time) []time.Time {
	rng := rand.New(rand.NewPCG(c.Seed, 0x57a11))
	at := make([]time.Time, c.RedisStalls)
	for i := range at {
		at[i] = c.Start.Add(time.Duration(rng.Int64N(int64(end.Sub(c.Start)))))
	}
	return at
}

// cutTimes is when a decision's connection is cut: RedisCuts moments drawn
// from Seed between Start and two cutLooks before end.
func (c Config) cutTimes(end time.Time) []time.Time {
	rng := rand.New(rand.NewPCG(c.Seed, 0xc07))
	span := end.Add(-2 * cutLook).Sub(c.Start)
	at := make([]time.Time, c.RedisCuts)
	for i := range at {
		at[i] = c.Start.Add(time.Duration(rng.Int64N(int64(span))))
	}
	return at
}

// nemesis is the seed's moves until end: about one restart a day, down
// from seconds to three hours, about one burst of upstream failures a
// day, a few truncated answers every other day, and about one day in
// five each, the upstream refusing every call as over its daily quota
// (a minute to an hour) and its Date a quarter of an hour to two hours
// behind (skewFor), in time order, none during another.
func (c Config) nemesis(end time.Time) []event {
	if !c.Nemesis {
		evs := c.besides(end)
		for _, d := range c.Restarts {
			evs = append(evs, event{at: c.Start.Add(d), down: time.Minute})
		}
		for _, d := range c.Upgrades {
			evs = append(evs, event{at: c.Start.Add(d), down: time.Minute, upgrade: true})
		}
		for _, d := range c.Terms {
			evs = append(evs, event{at: c.Start.Add(d), term: termHeld, down: time.Minute})
		}
		for _, d := range c.SkewedStarts {
			evs = append(evs, event{at: c.Start.Add(d), skew: time.Hour, down: time.Minute})
		}
		sort.Slice(evs, func(i, j int) bool { return evs[i].at.Before(evs[j].at) })
		return evs
	}
	rng := rand.New(rand.NewPCG(c.Seed, 0x5eed))
	var evs []event
	for day := 0; day < c.Days; day++ {
		base := c.Start.Add(time.Duration(day) * 24 * time.Hour)
		if rng.IntN(4) < 3 {
			down := time.Duration(rng.Int64N(int64(3 * time.Hour)))
			evs = append(evs, event{at: base.Add(time.Duration(rng.Int64N(int64(24 * time.Hour)))), down: max(down, time.Second)})
		}
		if rng.IntN(4) < 3 {
			evs = append(evs, event{at: base.Add(time.Duration(rng.Int64N(int64(24 * time.Hour)))), fail: 1 + rng.IntN(40)})
		}
		if rng.IntN(2) == 0 {
			evs = append(evs, event{at: base.Add(time.Duration(rng.Int64N(int64(24 * time.Hour)))), cut: 1 + rng.IntN(10)})
		}
		if rng.IntN(5) == 0 {
			evs = append(evs, event{at: base.Add(time.Duration(rng.Int64N(int64(24 * time.Hour)))),
				refuse: time.Minute + time.Duration(rng.Int64N(int64(time.Hour)))})
		}
		if rng.IntN(5) == 0 {
			evs = append(evs, event{at: base.Add(time.Duration(rng.Int64N(int64(24 * time.Hour)))),
				skew: 15*time.Minute + time.Duration(rng.Int64N(int64(2*time.Hour)))})
		}
		if rng.IntN(3) == 0 {
			evs = append(evs, event{at: base.Add(time.Duration(rng.Int64N(int64(24 * time.Hour)))),
				term: termHold(rng), down: time.Second + time.Duration(rng.Int64N(int64(time.Hour)))})
		}
		if rng.IntN(3) == 0 {
			evs = append(evs, joinAt(rng, base))
		}
		if rng.IntN(4) == 0 {
			evs = append(evs, event{at: base.Add(time.Duration(rng.Int64N(int64(24 * time.Hour)))),
				full: 10*time.Minute + time.Duration(rng.Int64N(int64(110*time.Minute)))})
		}
	}
	sort.Slice(evs, func(i, j int) bool { return evs[i].at.Before(evs[j].at) })
	out := evs[:0]
	for _, ev := range evs {
		if ev.at.Add(ev.lasts()).Before(end) && (len(out) == 0 || ev.at.After(out[len(out)-1].at.Add(out[len(out)-1].lasts()))) {
			out = append(out, ev)
		}
	}
	return out
}

// besides is, with Beside, a second process joining the key once a day.
func (c Config) besides(end time.Time) []event {
	if !c.Beside {
		return nil
	}
	rng := rand.New(rand.NewPCG(c.Seed, 0xbe51de))
	var evs []event
	for day := 0; day < c.Days; day++ {
		if ev := joinAt(rng, c.Start.Add(time.Duration(day)*24*time.Hour)); ev.at.Add(ev.lasts()).Before(end) {
			evs = append(evs, ev)
		}
	}
	return evs
}

// joinAt is a second process joining the key on the day from base, for
// half an hour to three hours, a run every five to fifteen minutes.
func joinAt(rng *rand.Rand, base time.Time) event {
	return event{at: base.Add(time.Duration(rng.Int64N(int64(24 * time.Hour)))),
		join:      30*time.Minute + time.Duration(rng.Int64N(int64(150*time.Minute))),
		joinEvery: 5*time.Minute + time.Duration(rng.Int64N(int64(10*time.Minute))), pick: rng.IntN(1 << 20)}
}

// termHold is how long the upstream holds the page a SIGTERM meets: two
// times in three a few seconds, within the page's own bound, so that the
// drain stores it; else past that bound, so that it is abandoned, charged.
func termHold(rng *rand.Rand) time.Duration {
	if rng.IntN(3) < 2 {
		return time.Second + time.Duration(rng.Int64N(int64(ingest.Delivery/2)))
	}
	return ingest.Delivery + time.Duration(rng.Int64N(int64(time.Minute)))
}

// lasts is how long the nemesis holds the event's fault.
func (ev event) lasts() time.Duration {
	switch {
	case ev.term > 0:
		return termWait + termBound + ev.down
	case ev.join > 0:
		return ev.join + ev.joinEvery
	case ev.full > 0:
		return ev.full
	case ev.skew > 0:
		return skewFor
	case ev.refuse > 0:
		return ev.refuse
	}
	return ev.down
}

// besideRegion is the pick-th of the regions the daemon does not run (of
// all of them, when it runs every one).
func (h *History) besideRegion(pick int) string {
	var out []string
	for _, code := range regions.Builtin.Codes() {
		if !slices.ContainsFunc(h.Charts, func(c regions.Chart) bool { return c.Code == code }) {
			out = append(out, code)
		}
	}
	if len(out) == 0 {
		out = regions.Builtin.Codes()
	}
	return out[pick%len(out)]
}

// readRuns is every chart run the database holds.
func readRuns(ctx context.Context, db *store.DB) ([]Run, error) {
	rows, err := db.Reader().QueryContext(ctx, `SELECT id, region, category, status, started_ms, COALESCE(slot_ms, 0), COALESCE(finished_ms, 0), pages FROM runs WHERE kind = 'trending' ORDER BY started_ms`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []Run
	for rows.Next() {
		var r Run
		var started, slot, finished int64
		if err := rows.Scan(&r.ID, &r.Region, &r.Category, &r.Status, &started, &slot, &finished, &r.Pages); err != nil {
			return nil, err
		}
		r.Started = time.UnixMilli(started)
		if slot != 0 {
			r.Slot = time.UnixMilli(slot)
		}
		if finished != 0 {
			r.Finished = time.UnixMilli(finished)
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

// readPasses is every pass of the work with no run row the database holds.
func readPasses(ctx context.Context, db *store.DB) ([]Pass, error) {
	rows, err := db.Reader().QueryContext(ctx, `SELECT entry, status, started_ms, COALESCE(slot_ms, 0) FROM passes ORDER BY started_ms`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []Pass
	for rows.Next() {
		var p Pass
		var started, slot int64
		if err := rows.Scan(&p.Entry, &p.Status, &started, &slot); err != nil {
			return nil, err
		}
		p.Started = time.UnixMilli(started)
		if slot != 0 {
			p.Slot = time.UnixMilli(slot)
		}
		out = append(out, p)
	}
	return out, rows.Err()
}

// Entry is one row of the quota ledger: the pool a call drew from, its
// units, when the limiter admitted it, and whether it was given back.
type Entry struct {
	Pool      string
	Units     int64
	At        time.Time
	GivenBack bool
	Unmetered bool  // admitted while the limiter could not be reached
	Peer      bool  // in the other worker's database (readPeer)
	Seq       int64 // the order its database recorded it in
	CallID    string
}

// readLedger is the quota ledger, in the order the calls were admitted.
func readLedger(ctx context.Context, db *store.DB) ([]Entry, error) {
	rows, err := db.Reader().QueryContext(ctx, `SELECT l.pool, l.units, l.at_ms,
		EXISTS (SELECT 1 FROM ledger_given_back g WHERE g.quota_key = l.quota_key AND g.call_id = l.call_id),
		l.unmetered, l.seq, l.call_id
		FROM ledger l ORDER BY l.at_ms`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []Entry
	for rows.Next() {
		var e Entry
		var at int64
		if err := rows.Scan(&e.Pool, &e.Units, &at, &e.GivenBack, &e.Unmetered, &e.Seq, &e.CallID); err != nil {
			return nil, err
		}
		e.At = time.UnixMilli(at)
		out = append(out, e)
	}
	return out, rows.Err()
}

// backedUp is the times of the scheduled backups in dir, oldest first,
// read from their names (ingest-20060102T150405Z.db: docs/operations/backups.md).
func backedUp(dir string) ([]time.Time, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var out []time.Time
	for _, e := range entries {
		stamp, ok := strings.CutPrefix(e.Name(), "ingest-")
		stamp, ok2 := strings.CutSuffix(stamp, ".db")
		if at, err := time.Parse("20060102T150405Z", stamp); ok && ok2 && err == nil {
			out = append(out, at)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Before(out[j]) })
	return out, nil
}

// readTombstones is the videos the database deleted as gone upstream.
func readTombstones(ctx context.Context, db *store.DB) (map[string]time.Time, error) {
	rows, err := db.Reader().QueryContext(ctx, `SELECT id, gone_ms FROM videos_gone`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string]time.Time{}
	for rows.Next() {
		var id string
		var ms int64
		if err := rows.Scan(&id, &ms); err != nil {
			return nil, err
		}
		out[id] = time.UnixMilli(ms)
	}
	return out, rows.Err()
}

// stored says whether the database holds the held page: its first video
// in the run of its chart that was the latest started when the upstream
// charged it (an earlier run may hold the same video).
func stored(ctx context.Context, db *store.DB, p Held) (bool, error) {
	if p.First == "" {
		return false, nil
	}
	var n int
	err := db.Reader().QueryRowContext(ctx, `SELECT count(*) FROM trending_entries e
		JOIN videos v ON v.vid = e.vid
		WHERE v.id = ? AND e.run_id = (SELECT id FROM runs WHERE kind = 'trending' AND region = ? AND category = ?
		AND started_ms <= ? ORDER BY started_ms DESC LIMIT 1)`,
		p.First, p.Region, p.Category, p.At.UnixMilli()).Scan(&n)
	return n > 0, err
}

package regions

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"sync"
	"time"

	"github.com/robfig/cron/v3"

	"github.com/ingestworks/ingest"
)

// LockTTL is how long a region's lease lives without renewal; the holder
// renews it while the pass runs, so a crashed worker frees it this soon.
const LockTTL = 2 * time.Minute

// Runner runs passes, never one region twice at once: an in-process guard
// first, then a lease that holds across processes and hosts.
type Runner struct {
	Passes []*Pass // in schedule order
	Locker Locker
	Logger *slog.Logger
	// Observe, when set, sees every finished pass (metrics), with the slot
	// the schedule started it for: zero for a pass no slot started (--once,
	// a catch-up at start), which cannot be late for one.
	Observe func(res PassResult, took time.Duration, slot time.Time)
	// PassLevel is the level of the line each finished pass logs (a failed
	// pass always logs at error). run --once sets debug and logs one summary
	// line instead, so that cron mails nothing on a good run.
	PassLevel slog.Level
	// Drain, once closed, starts no new pass; the passes' own Drain ends
	// those in flight between pages. nil never closes.
	Drain <-chan struct{}
	// LastStart, when set, reads the latest start of a chart's pass from
	// the store. Hosts that share one store share it: a daemon that takes
	// a chart's lease after another host's pass of the same slot has ended
	// skips the slot instead of storing the chart twice.
	LastStart func(ctx context.Context, chart string) (time.Time, error)
	// Pace, when set, says whether a chart runs at a slot of its schedule:
	// a paced chart skips the slots its planned cadence does not need.
	Pace func(ctx context.Context, chart string, slot time.Time) bool

	mu       sync.Mutex
	running  map[string]bool
	started  map[string]time.Time // the daemon's latest start of each chart's pass
	slots    map[string]Schedule  // the daemon's schedule of each chart
	closed   bool                 // no pass may start: the daemon is waiting for those in flight
	inflight sync.WaitGroup       // passes claimed and not yet released
}

// Once runs every pass now, one after another. It stops early on a fatal
// error (the key is rejected, the upstream cannot be reached) or when Drain
// closes; the passes it did not run are not in the results.
func (r *Runner) Once(ctx context.Context) []PassResult {
	var results []PassResult
	for _, p := range r.Passes {
		if stopping(r.Drain) || ctx.Err() != nil {
			break
		}
		res, ran := r.RunPass(ctx, p)
		if ran {
			results = append(results, res)
		}
		if res.Fatal {
			break
		}
	}
	return results
}

// RunPass runs one pass unless it is already running here or elsewhere.
// ran is false when it was skipped for that reason.
func (r *Runner) RunPass(ctx context.Context, p *Pass) (res PassResult, ran bool) {
	return r.runPass(ctx, p, time.Time{})
}

func (r *Runner) runPass(ctx context.Context, p *Pass, slot time.Time) (res PassResult, ran bool) {
	log := r.Logger.With(ingest.LogRegion, p.Chart())
	if !r.claim(p.Chart()) {
		log.Info("pass skipped: already running in this process, or shutting down")
		return PassResult{Outcome{Region: p.Chart()}}, false
	}
	defer r.release(p.Chart())
	unlock, ok, err := r.Locker.Lock(ctx, "region:"+p.Chart(), LockTTL)
	if errors.Is(err, ingest.ErrUnavailable) {
		// The lease lives beside the limiter, which is down: cheap calls go
		// ahead unmetered, so the pass runs too, guarded in this process only.
		log.Warn("lease unavailable: running with the in-process guard only", ingest.LogErr, err)
		unlock, ok, err = func() {}, true, nil
	}
	if err != nil {
		res = PassResult{Outcome{Region: p.Chart()}}
		res.fail(fmt.Errorf("lock: %w", err))
		log.Error("pass failed", ingest.LogErr, res.Err)
		return res, true
	}
	if !ok {
		log.Warn("pass skipped: already running in another process (or a crashed one's lease has not expired yet)", "lease_ttl", LockTTL.String())
		return PassResult{Outcome{Region: p.Chart()}}, false
	}
	defer unlock()
	if r.ranElsewhere(ctx, p.Chart()) {
		log.Info("pass skipped: another process ran this slot")
		return PassResult{Outcome{Region: p.Chart()}}, false
	}
	start := time.Now()
	res = r.guarded(ctx, p)
	r.ended(log, res, time.Since(start), slot)
	return res, true
}

// ranElsewhere reports whether the store holds a start of chart within its
// current slot that this daemon did not make. Only a daemon has slots.
func (r *Runner) ranElsewhere(ctx context.Context, chart string) bool {
	r.mu.Lock()
	s, ok := r.slots[chart]
	r.mu.Unlock()
	if !ok || r.LastStart == nil {
		return false
	}
	last, err := r.LastStart(ctx, chart)
	if err != nil {
		r.Logger.Warn("read the chart's last start: running the slot", ingest.LogRegion, chart, ingest.LogErr, err)
		return false
	}
	return !s.Missed(last, time.Now())
}

// guarded runs the pass and turns a panic outside its run (the run itself
// recovers its own) into a failed result.
func (r *Runner) guarded(ctx context.Context, p *Pass) (res PassResult) {
	defer func() {
		if v := recover(); v != nil {
			res = PassResult{Outcome{Region: p.Chart()}}
			res.fail(fmt.Errorf("panic: %v", v))
			r.Logger.Error("pass panicked", ingest.LogRegion, p.Chart(), "panic", v, "stack", string(debug.Stack()))
		}
	}()
	return p.Run(ctx)
}

// ended logs how a pass ended and lets Observe see it.
func (r *Runner) ended(log *slog.Logger, res PassResult, took time.Duration, slot time.Time) {
	did := []any{ingest.LogPages, res.Pages, ingest.LogVideos, res.Videos, ingest.LogUnits, res.TotalUnits(), ingest.LogDuration, took}
	if res.Remaining >= 0 {
		did = append(did, ingest.LogRemaining, res.Remaining)
	}
	LogEnd(log, r.PassLevel, "pass", res.RunEnd, res.Err, did...)
	if r.Observe != nil {
		r.Observe(res, took, slot)
	}
}

// claim marks region running in this process; false when it already is,
// or when the daemon is shutting down. A claim counts as a pass in flight.
func (r *Runner) claim(region string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.running == nil {
		r.running = map[string]bool{}
	}
	if r.running[region] || r.closed {
		return false
	}
	r.running[region] = true
	r.inflight.Add(1)
	return true
}

func (r *Runner) release(region string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.running, region)
	r.inflight.Done()
}

// Daemon runs every pass on its staggered slot until Drain closes, then
// waits for the passes in flight (ctx cancels them at once). A region whose
// latest slot passed without a run (lastStart before it) runs once at start.
func (r *Runner) Daemon(ctx context.Context, every time.Duration, lastStart map[string]time.Time) error {
	c := cron.New(cron.WithLocation(time.UTC))
	scheds := make([]Schedule, len(r.Passes))
	r.mu.Lock()
	r.started, r.slots = map[string]time.Time{}, map[string]Schedule{}
	for chart, at := range lastStart {
		r.started[chart] = at
	}
	r.mu.Unlock()
	for i, p := range r.Passes {
		s, err := Stagger(every, i, len(r.Passes))
		if err != nil {
			return fmt.Errorf("--every: %w", err)
		}
		scheds[i] = s
		r.mu.Lock()
		r.slots[p.Chart()] = s
		r.mu.Unlock()
		c.Schedule(s, cron.FuncJob(func() { r.runDue(ctx, p, s, "") }))
		r.Logger.Info("scheduled", ingest.LogRegion, p.Chart(), "next_run", s.Next(time.Now()).Format(time.RFC3339))
	}
	c.Start()
	go func() {
		for i, p := range r.Passes {
			if stopping(r.Drain) {
				return
			}
			r.runDue(ctx, p, scheds[i], "catching up a missed slot")
		}
	}()
	select {
	case <-r.Drain:
	case <-ctx.Done():
	}
	c.Stop()
	r.wait(ctx)
	return nil
}

// runDue runs p when its latest slot has had no run yet. The schedule and
// the catch-up at start both ask here, so a slot that comes while the
// catch-up is still on its way to p runs once, not once each. A catch-up
// (why says so) runs for a slot that passed while no daemon ran: Observe
// sees no slot for it, as it was never late for one of this daemon's.
func (r *Runner) runDue(ctx context.Context, p *Pass, s Schedule, why string) {
	now := time.Now()
	slot := s.Prev(now)
	if !r.due(p.Chart(), s, now) || (r.Pace != nil && !r.Pace(ctx, p.Chart(), slot)) {
		return
	}
	if why != "" {
		r.Logger.Info(why, ingest.LogRegion, p.Chart())
		slot = time.Time{}
	}
	r.runPass(ctx, p, slot)
}

// due reports whether chart's latest slot at now has had no start, and
// if so counts this one.
func (r *Runner) due(chart string, s Schedule, now time.Time) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !s.Missed(r.started[chart], now) {
		return false
	}
	r.started[chart] = now
	return true
}

// StopGrace is how long a daemon stopped at once (ctx cancelled) waits for
// the passes in flight, whose calls ctx has cancelled, to record how they
// ended: a run must not stay "running" because a second signal came.
const StopGrace = 3 * time.Second

// wait refuses new passes and returns when those in flight have ended; once
// ctx is done, it waits StopGrace at most.
func (r *Runner) wait(ctx context.Context) {
	r.mu.Lock()
	r.closed = true
	r.mu.Unlock()
	done := make(chan struct{})
	go func() { r.inflight.Wait(); close(done) }()
	select {
	case <-done:
		return
	case <-ctx.Done():
	}
	select {
	case <-done:
	case <-time.After(StopGrace):
		r.Logger.Warn("passes still in flight after the grace period; stopping without them", "grace", StopGrace)
	}
}

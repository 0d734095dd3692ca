package jobs

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"strings"
	"sync"
	"time"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/clock"
)

// LockTTL is how long an entry's lease lives without renewal; the holder
// renews it while the run goes on, so a crashed worker frees it this soon.
const LockTTL = 2 * time.Minute

// Runner runs the entries of a schedule, never one twice at once: an
// in-process guard first, then a lease that holds across processes and
// hosts. Every run ends the same way, whatever its kind: the LogEnd line,
// then Observe.
type Runner struct {
	Passes []*Pass // in schedule order
	Locker Locker
	Logger *slog.Logger
	Clock  ingest.Clock // the house's; required: the slots, the backoff and the starts it compares are on it
	// Observe, when set, sees every finished run (metrics), with the slot
	// the schedule started it for: zero for a run no slot started (--once,
	// a catch-up at start), which cannot be late for one.
	Observe func(e Entry, end Ended, took time.Duration, slot time.Time)
	// PassLevel is the level of the line each finished chart pass logs (a
	// failed one always logs at error). run --once sets debug and logs one
	// summary line instead, so that cron mails nothing on a good run.
	PassLevel slog.Level
	// Drain, once closed, starts no new run; the jobs' own Drain ends those
	// in flight between pages. nil never closes.
	Drain <-chan struct{}
	// LastStart, when set, reads the latest start of a chart's pass from
	// the store. Hosts that share one store share it: a daemon that takes
	// a chart's lease after another host's pass of the same slot has ended
	// skips the slot instead of storing the chart twice.
	LastStart func(ctx context.Context, chart string) (time.Time, error)
	// Record, when set, keeps each pass of an entry that has no run row
	// (tracking, the refresh, the prune) with the slot it ran for.
	Record PassRecorder
	// Backoff, when set, is told each time the daemon's backoff starts,
	// lengthens or ends (a zero until): metrics and /readyz show it.
	Backoff func(until time.Time, inARow int, cause error)
	// Kept, when set, keeps the backoff where every process on the store
	// reads it: a daemon started during one, or running beside the one
	// that started it, waits for its end, and a chart that succeeds in any
	// of them ends it for all.
	Kept BackoffKeeper

	mu       sync.Mutex
	quit     chan error // the daemon's end by a fault no wait clears
	failing  backoff    // the daemon's: charts failing in a row, across charts
	running  map[string]bool
	started  map[string]time.Time // the daemon's latest start of each entry
	closed   bool                 // no run may start: the daemon is waiting for those in flight
	inflight sync.WaitGroup       // runs claimed and not yet released
}

// now is the house clock's time.
func (r *Runner) now() time.Time { return required(r.Clock, "Runner").Now() }

// Once runs every pass now, one after another. It stops early on a fatal
// error (the key is rejected, the upstream cannot be reached) or when Drain
// closes; the passes it did not run are not in the results. It goes by the
// backoff the store keeps as a daemon does: during one it runs no chart,
// and its failures start, lengthen or end one for every process on the
// store, so that a cron run every few minutes does not spend units on an
// upstream that fails every chart.
func (r *Runner) Once(ctx context.Context) []PassResult {
	var results []PassResult
	for _, p := range r.Passes {
		if stopping(r.Drain) || ctx.Err() != nil || r.backingOff(ctx, r.now()) {
			break
		}
		res, ran := r.runOncePass(ctx, p)
		if ran {
			results = append(results, res)
		}
		if res.Fatal || FailingInARow(results) {
			break
		}
	}
	return results
}

// runOncePass is RunPass for a run of every pass once: its end counts
// toward the backoff the store keeps, as a daemon's pass does.
func (r *Runner) runOncePass(ctx context.Context, p *Pass) (res PassResult, ran bool) {
	res, ran = r.RunPass(ctx, p)
	if ran {
		r.failed(ctx, res.Status == ingest.StatusFailed, res.Err)
	}
	return res, ran
}

// FailuresInARow is how many charts in a row may fail before a run of
// every chart stops: an upstream that fails them all (a 5xx that does not
// clear, a rate limit that never lifts, answers it cannot parse) would
// fail the rest the same way, each after the client's retries, each
// spending units.
const FailuresInARow = 3

// FailingInARow says whether the last FailuresInARow results all failed.
func FailingInARow(results []PassResult) bool {
	if len(results) < FailuresInARow {
		return false
	}
	for _, r := range results[len(results)-FailuresInARow:] {
		if r.Status != ingest.StatusFailed {
			return false
		}
	}
	return true
}

// RunPass runs one pass unless it is already running here or elsewhere.
// ran is false when it was skipped for that reason.
func (r *Runner) RunPass(ctx context.Context, p *Pass) (res PassResult, ran bool) {
	end, ran := r.Run(ctx, p.Entry())
	if end.Pass == nil {
		return PassResult{Outcome{Region: p.Chart(), RunEnd: end.RunEnd, Err: end.Err, Remaining: -1}}, ran
	}
	return *end.Pass, ran
}

// Run runs an entry now unless it is already running here or elsewhere.
// ran is false when it was skipped for that reason.
func (r *Runner) Run(ctx context.Context, e Entry) (end Ended, ran bool) {
	return r.run(ctx, e, attempt{})
}

// run runs e for a's slot (zero: no slot, as for --once). A catch-up runs
// for a slot that passed while no daemon ran: Observe sees no slot for it,
// as it was never late for one of this daemon's.
func (r *Runner) run(ctx context.Context, e Entry, a attempt) (end Ended, ran bool) {
	log := r.Logger.With(e.logKey(), e.Name)
	if !r.claim(e.Name) {
		log.Info(e.Kind.noun() + " skipped: already running in this process, or shutting down")
		return Ended{}, false
	}
	defer r.release(e.Name)
	unlock, ok, err := r.Locker.Lock(ctx, lease(e), LockTTL)
	if errors.Is(err, ingest.ErrUnavailable) {
		// The lease lives beside the limiter, which is down: cheap calls go
		// ahead unmetered, so the run goes on too, guarded in this process only.
		log.Warn("lease unavailable: running with the in-process guard only", ingest.LogErr, err)
		unlock, ok, err = func() {}, true, nil
	}
	if err != nil {
		end = Ended{Err: fmt.Errorf("lock: %w", err)}
		end.Status, end.Message = ingest.StatusFailed, end.Err.Error()
		r.ended(log, e, end, 0, time.Time{})
		return end, true
	}
	if !ok {
		// Replicas of a daemon race for each slot and all but one lose it,
		// slot after slot: that is the lease working, said at debug. A
		// command run once that finds its work taken says so.
		level := slog.LevelWarn
		if !a.slot.IsZero() {
			level = slog.LevelDebug
		}
		log.Log(ctx, level, e.Kind.noun()+" skipped: already running in another process (or a crashed one's lease has not expired yet)", "lease_ttl", LockTTL.String())
		return Ended{}, false
	}
	defer unlock()
	if !a.again && r.ranElsewhere(ctx, e, a.slot) {
		log.Info(e.Kind.noun() + " skipped: another process ran this slot")
		return Ended{}, false
	}
	slot := a.slot
	if a.catchUp {
		slot = time.Time{}
	}
	start := r.now()
	end = r.guarded(ctx, e, slot)
	end.Again = a.again
	r.record(ctx, log, e, end, start, slot)
	r.ended(log, e, end, r.now().Sub(start), slot)
	return end, true
}

// record keeps a pass of an entry that has no run row (Record): a chart's
// run row already holds its slot.
func (r *Runner) record(ctx context.Context, log *slog.Logger, e Entry, end Ended, start, slot time.Time) {
	if r.Record == nil || e.Kind.charts() || end.Status == "" {
		return
	}
	if err := r.Record.RecordPass(context.WithoutCancel(ctx), e.Name, start, r.now(), slot, end.Status); err != nil {
		log.Warn("record the pass; a restarted pacer counts from the one before it", ingest.LogErr, err)
	}
}

// lease names an entry's lease. A chart's keeps the name it always had, so
// that daemons of different versions sharing a limiter exclude each other.
func lease(e Entry) string {
	if e.Kind.charts() {
		return "region:" + e.Name
	}
	return "job:" + e.Name
}

// ranElsewhere reports whether the store holds a start of the chart at or
// after slot that this daemon did not make. Only a daemon's runs have a
// slot, and only charts' runs are in the store.
func (r *Runner) ranElsewhere(ctx context.Context, e Entry, slot time.Time) bool {
	if slot.IsZero() || !e.Kind.charts() || r.LastStart == nil {
		return false
	}
	last, err := r.LastStart(ctx, e.Name)
	if err != nil {
		r.Logger.Warn("read the chart's last start: running the slot", e.logKey(), e.Name, ingest.LogErr, err)
		return false
	}
	// A start stamped well ahead of this host's clock was made by a clock
	// stepped ahead, not in a slot still to come: taken for a run of every
	// slot before it, it would hold the chart for as long as the step.
	return !last.Before(slot) && !last.After(r.now().Add(ingest.AheadGuard))
}

// guarded runs the entry and turns a panic outside its run (a job's run
// recovers its own) into a failed end.
func (r *Runner) guarded(ctx context.Context, e Entry, slot time.Time) (end Ended) {
	defer func() {
		if v := recover(); v != nil {
			end = Ended{Err: fmt.Errorf("panic: %v", v)}
			end.Status, end.Message = ingest.StatusFailed, end.Err.Error()
			r.Logger.Error(e.Kind.noun()+" panicked", e.logKey(), e.Name, "panic", v, "stack", string(debug.Stack()))
		}
	}()
	return e.run(ctx, slot)
}

// ended logs how a run ended and lets Observe see it.
func (r *Runner) ended(log *slog.Logger, e Entry, end Ended, took time.Duration, slot time.Time) {
	level := slog.LevelInfo
	// A prune and a refresh are housekeeping, quiet with the passes under
	// run --once, except for a refresh that found videos gone.
	if e.Kind.charts() || e.Kind == KindPrune || (e.Kind == KindRefresh && end.Gone == 0) {
		level = r.PassLevel
	}
	msg := end.Message
	if msg == "" {
		msg = e.Kind.noun()
	}
	if end.Fatal && level < slog.LevelInfo {
		// run --once: what stopped every chart is the command's last line,
		// said there once.
		log.Debug(msg, ingest.LogStatus, end.Status, ingest.LogErr, end.Err)
	} else {
		LogEnd(log, level, msg, end.RunEnd, end.Err, append(end.Did, ingest.LogDuration, took)...)
	}
	if r.Observe != nil {
		r.Observe(e, end, took, slot)
	}
}

// backoff is how a daemon waits out an upstream that fails every chart:
// after FailuresInARow charts in a row fail, no chart runs until until,
// each further failure doubling the wait up to MaxBackoff; a chart that
// does not fail ends it.
type backoff struct {
	inARow   int
	rejected int // of inARow, those the upstream refused the key for
	wait     time.Duration
	until    time.Time
	blamed   string // ingest.Blamed of the failure that started it
}

// The first wait after FailuresInARow failures, and the longest.
const (
	FirstBackoff = 5 * time.Minute
	MaxBackoff   = time.Hour
)

// BackoffKeeper keeps the backoff in the store (store.DB).
type BackoffKeeper interface {
	KeptBackoff(ctx context.Context) (ingest.Backoff, error)
	KeepBackoff(ctx context.Context, b ingest.Backoff) error
}

func (r *Runner) backingOff(ctx context.Context, now time.Time) bool {
	r.adopt(ctx, now)
	r.mu.Lock()
	defer r.mu.Unlock()
	return now.Before(r.failing.until)
}

// adopt takes the backoff the store keeps as this daemon's: one this
// daemon kept before a restart, or another process started, lengthened or
// ended. A store it cannot read leaves the daemon with its own.
func (r *Runner) adopt(ctx context.Context, now time.Time) {
	if r.Kept == nil {
		return
	}
	k, err := r.Kept.KeptBackoff(ctx)
	if err != nil {
		// A database that cannot be read fails the pass too, which says
		// so: one line a fault, not two.
		r.Logger.Debug("read the backoff kept in the database: this process goes by its own", ingest.LogErr, err)
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	b := &r.failing
	if k.Until.Equal(b.until) {
		return
	}
	if k.Until.IsZero() {
		// A chart succeeded in another process: the upstream answers again.
		if now.Before(b.until) {
			r.Logger.Info("the backoff ended: another process's chart pass succeeded")
		}
		r.tell(time.Time{}, 0, nil)
		*b = backoff{}
		return
	}
	*b = backoff{inARow: k.InARow, wait: k.Wait, until: k.Until, blamed: k.Blamed}
	if !now.Before(k.Until) {
		return // ended by time: its wait stays for the next failure to double
	}
	r.Logger.Warn("backing off "+k.Blamed+" that fails every chart, as the database keeps it: no chart runs until then",
		"failures_in_a_row", k.InARow, "until_local", k.Until.Local().Format("2006-01-02 15:04:05 MST"),
		"until_utc", k.Until.UTC().Format(time.RFC3339), "cause", k.Cause)
	r.tell(k.Until, k.InARow, keptCause(k))
}

// keptCause is a cause read back from the store: its text, and a database
// blamed as the failure that started it was.
type keptCause ingest.Backoff

func (k keptCause) Error() string { return k.Cause }

func (k keptCause) Is(target error) bool {
	return target == ingest.ErrDamaged && k.Blamed == ingest.Blamed(ingest.ErrDamaged)
}

// keep writes the backoff a chart's end left (b) where every process on
// the store reads it; a store that cannot take it leaves this daemon's
// own, which still holds here.
func (r *Runner) keep(ctx context.Context, b ingest.Backoff) {
	if r.Kept == nil {
		return
	}
	if err := r.Kept.KeepBackoff(context.WithoutCancel(ctx), b); err != nil {
		r.Logger.Warn("keep the backoff in the database: a process started during it will not wait", ingest.LogErr, err)
	}
}

// failed counts a daemon's chart run that failed or not, and starts or
// lengthens the backoff, said once at warn with when charts run again. A
// pass the limiter could not decide (ingest.ErrUnavailable) asked the
// upstream nothing, and says nothing of it: it is not counted either way,
// so that a Redis briefly without its replica does not hold every chart
// for the backoff's minutes.
func (r *Runner) failed(ctx context.Context, failed bool, err error) {
	if failed && errors.Is(err, ingest.ErrUnavailable) {
		return
	}
	kept, changed := r.count(failed, err)
	if changed {
		r.keep(ctx, kept)
	}
}

// count is failed's count, under r.mu: the backoff to keep, and whether
// it changed.
func (r *Runner) count(failed bool, err error) (kept ingest.Backoff, changed bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	b := &r.failing
	if !failed {
		had := !b.until.IsZero()
		if had {
			r.tell(time.Time{}, 0, nil)
		}
		*b = backoff{}
		return ingest.Backoff{}, had
	}
	b.rejected++
	if !errors.Is(err, ingest.ErrBadKey) {
		b.rejected = 0
	}
	if b.inARow++; b.inARow < FailuresInARow {
		return ingest.Backoff{}, false
	}
	if b.rejected >= FailuresInARow {
		// The upstream refused the key outright, chart after chart: no wait
		// brings it back, so the daemon ends rather than look alive.
		r.end(fmt.Errorf("%s %d chart passes in a row: the daemon stops (exit 1), as no wait brings a refused key back; "+
			"set YOUTUBE_API_KEY to a key the project allows, then start it again", fromBadKey(err), b.rejected))
		return ingest.Backoff{}, false
	}
	b.wait = min(max(2*b.wait, FirstBackoff), MaxBackoff)
	// To the millisecond the store keeps, so that reading it back is
	// this same backoff, not another process's.
	b.until, b.blamed = r.now().Add(b.wait).Truncate(time.Millisecond), ingest.Blamed(err)
	r.Logger.Warn("backing off "+b.blamed+" that fails every chart: no chart runs until then", "failures_in_a_row", b.inARow,
		"until_local", b.until.Local().Format("2006-01-02 15:04:05 MST"), "until_utc", b.until.UTC().Format(time.RFC3339),
		"cause", deepest(err).Error())
	r.tell(b.until, b.inARow, err)
	return ingest.Backoff{Until: b.until, Wait: b.wait, InARow: b.inARow, Blamed: b.blamed, Cause: deepest(err).Error()}, true
}

// fromBadKey is err's text from the upstream's refusal of the key on, as
// the daemon's last line says it.
func fromBadKey(err error) string {
	msg := err.Error()
	if i := strings.Index(msg, ingest.ErrBadKey.Error()); i >= 0 {
		msg = msg[i:]
	}
	return msg + ":"
}

// tell hands the backoff to Backoff; r.mu is held.
func (r *Runner) tell(until time.Time, inARow int, cause error) {
	if r.Backoff != nil {
		r.Backoff(until, inARow, cause)
	}
}

// end stops the daemon with err, once; r.mu is held.
func (r *Runner) end(err error) {
	if r.quit == nil {
		r.quit = make(chan error, 1)
	}
	select {
	case r.quit <- err:
	default:
	}
}

// ending is the channel the daemon's end by a fault arrives on.
func (r *Runner) ending() <-chan error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.quit == nil {
		r.quit = make(chan error, 1)
	}
	return r.quit
}

// skipped tells Observe of a chart's slot the backoff skipped, as a failed
// attempt: a region fetches nothing while it lasts, and its failures in a
// row must go on counting for the alert on them to fire.
func (r *Runner) skipped(e Entry, slot time.Time) {
	r.mu.Lock()
	until, blamed := r.failing.until, r.failing.blamed
	r.mu.Unlock()
	if r.Observe == nil || slot.IsZero() {
		return
	}
	err := fmt.Errorf("not run: backing off %s that fails every chart until %s", blamed, until.UTC().Format(time.RFC3339))
	end := Ended{RunEnd: ingest.RunEnd{Status: ingest.StatusFailed, Message: err.Error()}, Err: err}
	r.Observe(e, end, 0, slot)
}

// claim marks an entry running in this process; false when it already is,
// or when the daemon is shutting down. A claim counts as a run in flight.
func (r *Runner) claim(name string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.running == nil {
		r.running = map[string]bool{}
	}
	if r.running[name] || r.closed {
		return false
	}
	r.running[name] = true
	r.inflight.Add(1)
	return true
}

// hold counts a run in flight that has not claimed an entry yet (a
// pacer's decision and what it is told after) until done is called; false
// when the daemon is shutting down.
func (r *Runner) hold() (done func(), ok bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return nil, false
	}
	r.inflight.Add(1)
	return r.inflight.Done, true
}

func (r *Runner) release(name string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.running, name)
	r.inflight.Done()
}

// startDaemon takes the entries' latest starts in the store.
func (r *Runner) startDaemon(lastStart map[string]time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.started = map[string]time.Time{}
	ahead := r.now().Add(ingest.AheadGuard)
	for name, at := range lastStart {
		if !at.After(ahead) { // one stamped by a clock stepped ahead holds no slot (ranElsewhere)
			r.started[name] = at
		}
	}
}

// runDue runs e for a's slot when no run of it has started at or after
// the slot. The schedule and the catch-up at start both ask here, so a
// slot that comes while the catch-up is still on its way to e runs once,
// not once each. A retry (a.again) runs again a slot this daemon started.
func (r *Runner) runDue(ctx context.Context, e Entry, a attempt) (Ended, bool) {
	if e.Kind.charts() && r.backingOff(ctx, r.now()) {
		r.Logger.Debug("pass skipped: backing off a failing upstream", e.logKey(), e.Name)
		r.skipped(e, a.slot)
		return Ended{}, false
	}
	if !a.again && !r.due(e.Name, a.slot, r.now()) {
		return Ended{}, false
	}
	if a.catchUp && !a.again {
		r.Logger.Info("catching up a missed slot", e.logKey(), e.Name)
	}
	end, ran := r.run(ctx, e, a)
	if ran && e.Kind.charts() {
		r.failed(ctx, end.Status == ingest.StatusFailed, end.Err)
	}
	return end, ran
}

// due reports whether name has had no start at or after slot, and if so
// counts one at now.
func (r *Runner) due(name string, slot, now time.Time) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.started[name].Before(slot) {
		return false
	}
	r.started[name] = now
	return true
}

// StopGrace is how long a daemon stopped at once (ctx cancelled) waits for
// the runs in flight, whose calls ctx has cancelled, to record how they
// ended: a run must not stay "running" because a second signal came.
const StopGrace = 3 * time.Second

// wait refuses new runs and returns when those in flight have ended; once
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
	case <-clock.After(StopGrace):
		r.Logger.Warn("runs still in flight after the grace period; stopping without them", "grace", StopGrace)
	}
}

package jobs

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"strings"
	"time"

	"github.com/ingestworks/ingest"
)

// RunStore records a backfill's runs.
type RunStore interface {
	StartRun(ctx context.Context, region, category string, kind ingest.PageKind, at time.Time) (runID int64, err error)
	RunFinisher
}

// RunFinisher closes a run: what a pass and a backfill share.
type RunFinisher interface {
	FinishRun(ctx context.Context, runID int64, end ingest.RunEnd) error
}

// Outcome is how a job's run ended, as the store records it (the embedded
// RunEnd), with what it got done.
type Outcome struct {
	ingest.RunEnd
	Region string
	RunID  int64 // zero when no run was started
	Pages  int   // pages stored by this run
	// Videos is how many videos the run stored, each once: the store keeps
	// one entry per (run, region, video), so a video a shifting chart shows
	// on two pages, or a page stored again after a restart, is one.
	Videos int
	// VideoIDs are those videos, so that a summary over several runs can
	// count a video on two charts once, as the videos table does.
	VideoIDs map[string]struct{}
	// Units is what the run's calls were charged, by pool (calls given
	// back are not in it).
	Units map[string]int64
	// Daily is the part of Units outside a pass's own cost, by pool: the
	// category names a region's first pass of a day reads.
	Daily map[string]int64
	// Remaining is what the default pool had left after the run's last
	// metered decision, -1 before any.
	Remaining int64
	Err       error // set when Status is failed
	// Fatal is set when no other region can succeed either: the upstream
	// rejects the key, or cannot be reached at all, or the store's disk is
	// full.
	Fatal bool
}

// TotalUnits is every unit the run's calls were charged, all pools together.
func (o Outcome) TotalUnits() int64 { return Sum(o.Units) }

// stored counts the videos of a stored page that the run had not stored yet.
func (o *Outcome) stored(videos []ingest.Video) {
	if o.VideoIDs == nil {
		o.VideoIDs = map[string]struct{}{}
	}
	for _, v := range videos {
		o.VideoIDs[v.ID] = struct{}{}
	}
	o.Videos = len(o.VideoIDs)
}

func (o *Outcome) fail(err error) {
	o.Status, o.Err, o.Message = ingest.StatusFailed, err, err.Error()
}

// job is the life of one run, the same for a pass and a backfill: a run row
// opened before the first call, a meter for every call, how the work ended
// classified one way, and the row closed even when ctx was cancelled.
type job struct {
	region string
	// name is what the outcome and messages call the job: its chart (US,
	// US/10) or region; region when empty.
	name string
	// start opens the run.
	start    func(ctx context.Context, at time.Time) (int64, error)
	quotaKey string
	costs    *ingest.Costs
	limiter  Limiter
	store    RunFinisher
	logger   *slog.Logger
	clock    ingest.Clock
}

// work does a job's calls through m. It returns nil for a clean end, with
// out.Status set when that end is not completed (interrupted, or stopped
// for --max-units); otherwise an error that classify turns into a status.
type work func(m *meter, out *Outcome) error

// run runs w inside a run of its own and returns how it ended.
func (j job) run(ctx context.Context, w work) Outcome {
	out := Outcome{Region: j.label(), Units: map[string]int64{}, Daily: map[string]int64{}, Remaining: -1}
	runID, err := j.start(ctx, j.clock.Now())
	if err = said(j.store, err); err != nil {
		out.fail(fmt.Errorf("start run: %w", err))
		out.Fatal = errors.Is(err, ingest.ErrDiskFull) || errors.Is(err, ingest.ErrDamaged)
		return out
	}
	out.RunID = runID
	m := newMeter(j.limiter, j.quotaKey, j.region, runID)
	if r, ok := j.store.(roomer); ok {
		m.room = r.Room
	}
	out.Units, out.Daily = m.units, m.daily
	err = said(j.store, j.guard(w, m, &out))
	out.Remaining = m.remaining
	j.classify(ctx, &out, err)
	out.At = j.clock.Now()
	// The run's row is written even when ctx was cancelled: a run must not
	// stay "running" because a second signal came.
	if ferr := said(j.store, j.store.FinishRun(context.WithoutCancel(ctx), runID, out.RunEnd)); ferr != nil && out.Err == nil {
		out.fail(fmt.Errorf("finish run: %w", ferr))
		out.Fatal = errors.Is(ferr, ingest.ErrDiskFull) || errors.Is(ferr, ingest.ErrDamaged)
	}
	return out
}

func (j job) label() string {
	if j.name != "" {
		return j.name
	}
	return j.region
}

// fuller is a store that says a full disk the one way the docs give,
// whichever part met it (store.DB.Full): the limiter and the ledger write
// the database the store writes, and their errors name no file.
type fuller interface {
	Full(err error) error
}

// said is err as the store says it: SQLite's or PostgreSQL's word for a
// full disk, met by the store, the ledger or the limiter, names the disk
// and the fix.
func said(store any, err error) error {
	if f, ok := store.(fuller); ok && err != nil {
		return f.Full(err)
	}
	return err
}

// guard runs w and turns a panic into an error, so that the run's row still
// records how it ended.
func (j job) guard(w work, m *meter, out *Outcome) (err error) {
	defer func() {
		if v := recover(); v != nil {
			j.logger.Error("run panicked", "panic", v, "stack", string(debug.Stack()))
			err = fmt.Errorf("panic: %v", v)
		}
	}()
	return w(m, out)
}

// classify turns how the work ended into a status. A refusal or an
// exhausted upstream quota is a clean stop, not a failure.
func (j job) classify(ctx context.Context, out *Outcome, err error) {
	if err == nil {
		if out.Status == "" {
			out.Status = ingest.StatusCompleted
		}
		return
	}
	if end, ok, berr := j.quotaStop(ctx, err); ok {
		if berr != nil {
			out.fail(berr)
			return
		}
		out.Status, out.Message, out.RetryAt = end.Status, end.Message, end.RetryAt
		return
	}
	switch {
	case errors.Is(err, context.Canceled) && ctx.Err() != nil:
		// Stopped from outside (a second signal, or the stop's bound) in
		// the middle of a page: the pages before it are stored, as after
		// the first.
		why := ErrSecondSignal
		if cause := context.Cause(ctx); errors.Is(cause, ErrStopBound) {
			why = ErrStopBound
		}
		out.Status, out.Message = ingest.StatusInterrupted, "interrupted: "+why.Error()+", the page in flight not stored"
	case errors.Is(err, ErrStopping):
		// A signal came while a retry or the next call was due: none is made.
		out.Status, out.Message = ingest.StatusInterrupted, "interrupted: a signal came before the next attempt, which was not made"
	case errors.Is(err, ingest.ErrNoChart):
		out.Status, out.Message = ingest.StatusSkipped, "no chart: the upstream has no most-popular chart for "+j.label()
	case errors.Is(err, ingest.ErrBadKey), Unreachable(err), errors.Is(err, ingest.ErrDiskFull), errors.Is(err, ingest.ErrDamaged):
		out.fail(err)
		out.Fatal = true
	default:
		out.fail(err)
	}
}

// quotaStop tells whether err is a clean stop for want of quota: the
// limiter refused, or the upstream said its quota is spent (then the pools
// are blocked for every worker until its reset). ok is false for any other
// error; blockErr is set when the block could not be written.
func (j job) quotaStop(ctx context.Context, err error) (end ingest.RunEnd, ok bool, blockErr error) {
	var refused *ingest.RefusedError
	var exhausted *ingest.QuotaExhaustedError
	switch {
	case errors.As(err, &refused):
		return ingest.RunEnd{Status: ingest.StatusStopped, RetryAt: refused.Decision.RetryAt,
			Message: "quota refused " + refused.Decision.Op}, true, nil
	case errors.As(err, &exhausted):
		retry, pools, berr := BlockSpent(context.WithoutCancel(ctx), j.limiter, j.costs, exhausted)
		if berr != nil {
			return ingest.RunEnd{}, true, berr
		}
		return ingest.RunEnd{Status: ingest.StatusStopped, RetryAt: retry,
			Message: blockedMessage(pools, retry)}, true, nil
	}
	return ingest.RunEnd{}, false, nil
}

// UpstreamExhausted begins the message of a run the upstream's own quota
// stopped.
const UpstreamExhausted = "upstream quota exhausted"

// blockedMessage says which pools the upstream's spent quota blocked, and
// until when: a run's message, and the catalogue's log line.
func blockedMessage(pools []string, until time.Time) string {
	return UpstreamExhausted + ": pool " + strings.Join(pools, ", ") + " blocked until " + until.UTC().Format(time.RFC3339)
}

// Blocker is the part of the limiter that refuses a pool the upstream
// said spent (Limiter.Block).
type Blocker interface {
	Block(ctx context.Context, pool, op string) (until time.Time, err error)
}

// BlockSpent refuses each pool the upstream said spent (exhausted) for
// every worker until the upstream's reset, by the limiter's clock, and
// keeps the blocks in the ledger, so that a limiter that loses its data
// gets them back: when the last block ends, and the pools. Every call that
// meets the upstream's exhausted quota blocks so, a pass's, the
// catalogue's or a proxied client's, so that no worker calls again before
// the reset.
func BlockSpent(ctx context.Context, l Blocker, costs *ingest.Costs, exhausted *ingest.QuotaExhaustedError) (time.Time, []string, error) {
	var retry time.Time
	pools := costs.BlockedPools(exhausted)
	for _, pool := range pools {
		until, err := l.Block(ctx, pool, exhausted.Op)
		if err != nil && until.IsZero() {
			return time.Time{}, pools, fmt.Errorf("block pool %s: %w", pool, err)
		}
		if err != nil {
			return until, pools, err
		}
		retry = maxTime(retry, until)
	}
	return retry, pools, nil
}

func maxTime(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// stopping says whether drain is closed: no new page is started then.
func stopping(drain <-chan struct{}) bool {
	select {
	case <-drain:
		return true
	default:
		return false
	}
}

// interrupted marks a clean end between pages because drain closed.
func (o *Outcome) interrupted() {
	o.Status, o.Message = ingest.StatusInterrupted, "interrupted: stopped between pages"
}

// required is a job's clock, which its builder must give: the house's,
// that the limiter and the pacer read too.
func required(c ingest.Clock, job string) ingest.Clock {
	if c == nil {
		panic("jobs: " + job + ".Clock is required: the house's clock")
	}
	return c
}

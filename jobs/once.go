package jobs

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/clock"
)

// Once runs every chart's pass now, then refreshing, tracking and pruning
// when they are set, each through the same Runner as the daemon's, and
// logs one summary line for the passes instead of one line each, before
// pruning's, with every unit the run spent. With a
// Pacer (run --once --pace), it runs only the charts, the refresh and
// tracking the pacer says are due now, highest priority first: a cron
// every few minutes then spreads the pools as the daemon does. err is
// pruning's failure; a failure of tracking is logged, not returned: the
// charts are the run's job, tracking an addition.
func (d *Daemon) Once(ctx context.Context) (results []PassResult, err error) {
	d.Runner.PassLevel = slog.LevelDebug
	start := d.Runner.now()
	planned := len(d.Runner.Passes)
	if d.Pacer != nil {
		results = d.pacedOnce(ctx, start)
		planned = len(results)
	} else {
		results = d.Runner.Once(ctx)
	}
	more := Sum(d.Spent)
	logUpstreamBlock(d.Runner.Logger, results)
	if fatal(results) || stopping(d.Runner.Drain) || ctx.Err() != nil {
		LogSummary(d.Runner.Logger, results, planned, more, d.Runner.now().Sub(start))
		// What stopped the passes (the key, the network, a full disk, a
		// signal) stops the jobs after them too, so that it is the run's
		// one last word.
		return results, nil
	}
	if d.Refresh != nil {
		more += Sum(d.runOnceMore(ctx, d.Refresh.Entry(), start).Units)
	}
	if d.Track != nil {
		more += Sum(d.runOnceMore(ctx, d.Track.Entry(), start).Units)
	}
	LogSummary(d.Runner.Logger, results, planned, more, d.Runner.now().Sub(start))
	if d.Prune != nil {
		if end, _ := d.Runner.Run(ctx, d.Prune.Entry()); end.Status == ingest.StatusFailed {
			return results, end.Err
		}
	}
	return results, nil
}

// runOnceMore runs an entry after the passes (refreshing, tracking): with
// a Pacer, only when it says the entry is due at now, and tells it how the
// run ended.
func (d *Daemon) runOnceMore(ctx context.Context, e Entry, now time.Time) Ended {
	end, _, _ := d.paced(ctx, e.Name, now, func() (Ended, bool) { return d.Runner.Run(ctx, e) })
	return end
}

// pacedOnce runs the passes the pacer says are due at now, every region's
// own chart before any category chart, and stops as Runner.Once does.
func (d *Daemon) pacedOnce(ctx context.Context, now time.Time) []PassResult {
	passes := append([]*Pass(nil), d.Runner.Passes...)
	sort.SliceStable(passes, func(i, j int) bool { return passes[i].Entry().Kind < passes[j].Entry().Kind })
	var results []PassResult
	due := 0
	for _, p := range passes {
		if stopping(d.Runner.Drain) || ctx.Err() != nil || d.Runner.backingOff(ctx, d.Runner.now()) {
			break
		}
		var res PassResult
		_, ran, isDue := d.paced(ctx, p.Chart(), now, func() (Ended, bool) {
			r, ran := d.Runner.runOncePass(ctx, p)
			res = r
			return Ended{RunEnd: r.RunEnd, Units: r.Units, Daily: r.Daily}, ran
		})
		if !isDue {
			continue
		}
		due++
		if ran {
			results = append(results, res)
		}
		if res.Fatal || FailingInARow(results) {
			break
		}
	}
	d.Runner.Logger.Info("run --once --pace: the charts the plan says are due now", "due", due, "charts", len(passes))
	return results
}

// logUpstreamBlock says once, at info, that the upstream refused for want
// of its own quota: which pools, and until when, in this host's time and
// UTC. The passes' own lines are at debug under run --once.
func logUpstreamBlock(log *slog.Logger, results []PassResult) {
	for _, r := range results {
		if r.Status == ingest.StatusStopped && strings.HasPrefix(r.Message, UpstreamExhausted) && !r.RetryAt.IsZero() {
			log.Info("the upstream refused: its daily quota is spent, and the charts wait for its reset", ingest.LogDetail, r.Message,
				"until_local", r.RetryAt.Local().Format("2006-01-02 15:04 MST"), "until_utc", r.RetryAt.UTC().Format(time.RFC3339))
			return
		}
	}
}

// LogSummary is run --once's one line at info, before pruning's:
// how the passes ended, what they stored, and every unit the run spent
// (the passes' and more: the catalogue's, refreshing's, tracking's), so
// that it says what the upstream charged. videos counts a video on
// several charts once, as the videos table holds it; entries counts each
// chart's.
func LogSummary(log *slog.Logger, results []PassResult, planned int, more int64, took time.Duration) {
	counts := map[ingest.RunStatus]int{}
	videos := map[string]struct{}{}
	var pages, entries int
	units := more
	for _, r := range results {
		counts[r.Status]++
		pages, entries, units = pages+r.Pages, entries+r.Videos, units+r.TotalUnits()
		for id := range r.VideoIDs {
			videos[id] = struct{}{}
		}
	}
	attrs := []any{"charts", planned}
	for _, st := range ingest.Ended {
		if counts[st] > 0 {
			attrs = append(attrs, string(st), counts[st])
		}
	}
	if n := planned - len(results); n > 0 {
		attrs = append(attrs, "not_run", n)
	}
	attrs = append(attrs, ingest.LogPages, pages, ingest.LogVideos, len(videos), ingest.LogEntries, entries,
		ingest.LogUnits, units, ingest.LogDuration, took)
	log.Info("run --once", attrs...)
}

// OnceError is how a run of every pass once ended: nil when every pass
// completed or stopped cleanly, else Failed's error. A fatal failure (the
// key, or an upstream that cannot be reached) stopped the run at its first
// region: one error says so, with how many regions did not run. endpoint is
// the upstream's base URL as configured, "" for Google's.
func OnceError(results []PassResult, planned int, endpoint string) error {
	for _, r := range results {
		if r.Fatal {
			return fatalError(r, results, planned, endpoint)
		}
	}
	return Failed(results, planned)
}

// fatal says whether a pass ended the run for every chart.
func fatal(results []PassResult) bool {
	for _, r := range results {
		if r.Fatal {
			return true
		}
	}
	return false
}

// innermost is the deepest error of err's chain that still matches target:
// the one that says what happened, without the path of calls around it.
func innermost(err, target error) error {
	for next := errors.Unwrap(err); next != nil && errors.Is(next, target); next = errors.Unwrap(next) {
		err = next
	}
	return err
}

func fatalError(r PassResult, results []PassResult, planned int, endpoint string) error {
	notRun := fmt.Sprintf("%d of %d regions not run", planned-len(results), planned)
	if planned == len(results) {
		failed := 0
		for _, x := range results {
			if x.Status == ingest.StatusFailed {
				failed++
			}
		}
		notRun = fmt.Sprintf("%d of %d regions failed", failed, planned)
	}
	if Unreachable(r.Err) {
		if endpoint == "" {
			endpoint = "Google's endpoint"
		}
		return fmt.Errorf("the upstream (%s) cannot be reached: %s; check --youtube-endpoint / YOUTUBE_ENDPOINT and the network (stopped at %s: %s)",
			endpoint, Cause(r.Err), r.Region, notRun)
	}
	err := r.Err
	for _, said := range []error{ingest.ErrDiskFull, ingest.ErrDamaged} {
		if errors.Is(err, said) {
			err = innermost(err, said)
		}
	}
	return fmt.Errorf("%w (stopped at %s: %s)", err, r.Region, notRun)
}

// Failed is nil when every pass completed or stopped cleanly, else an
// error naming each region that failed, of planned. When one failed
// because the limiter could not be reached, it says what that means: the
// calls it refused were over what fail_open lets go unmetered, and the
// charts carry on once it answers.
func Failed(results []PassResult, planned int) error {
	var failed, regions []string
	causes := map[string]bool{}
	why := ""
	for _, r := range results {
		if r.Status != ingest.StatusFailed {
			continue
		}
		failed = append(failed, fmt.Sprintf("%s: %v", r.Region, r.Err))
		regions = append(regions, r.Region)
		causes[deepest(r.Err).Error()] = true
		if errors.Is(r.Err, ingest.ErrClockSkew) {
			// The clock's message names the clock, how it is known and the fix.
			why = ""
		} else if errors.Is(r.Err, ingest.ErrUnavailable) {
			why = ". The limiter did not answer, and a call was over what fail_open lets go unmetered " +
				"(its max_cost, or the budget the database used in the window, counted from the ledger): " +
				"the charts that completed are stored, and the others carry on once the limiter answers (docs/explanation/quota.md)"
		}
	}
	if len(failed) == 0 {
		return nil
	}
	said := strings.Join(failed, "; ")
	if len(failed) > 1 && len(causes) == 1 {
		// One cause, said once.
		for _, r := range results {
			if r.Status == ingest.StatusFailed {
				said = fmt.Sprintf("%s, each: %s", strings.Join(regions, ", "), deepest(r.Err))
				break
			}
		}
	}
	if FailingInARow(results) && len(results) < planned {
		why += fmt.Sprintf("; stopped after %d failures in a row, %d not run: the upstream fails every chart, "+
			"so the rest would spend units the same way; run again later (docs/operations/faults.md)", FailuresInARow, planned-len(results))
	}
	return fmt.Errorf("%d of %d regions failed: %s%s", len(failed), planned, said, why)
}

// deepest is the last error of err's chain: what went wrong, without the
// chart and the call around it.
func deepest(err error) error {
	if errors.Is(err, ingest.ErrClockSkew) {
		// Its chain ends in "unavailable"; what the clocks say is above it.
		msg := err.Error()
		return errors.New(msg[strings.Index(msg, ingest.ErrClockSkew.Error()):])
	}
	for next := errors.Unwrap(err); next != nil; next = errors.Unwrap(next) {
		err = next
	}
	return err
}

// Signals: the first SIGINT, SIGTERM or SIGHUP closes drain (no new runs,
// the page in flight commits, the run is marked interrupted); the second,
// or StopBound after the first, cancels ctx (stop at once), with the cause
// (ErrSecondSignal, ErrStopBound). SIGHUP stops as SIGTERM does rather than
// reload: every setting is read once at start, so a supervisor restarts
// ingest to change one, and a hangup (a closed terminal, a reload sent by
// habit) never kills it with a run left open.
func Signals(parent context.Context, log *slog.Logger) (ctx context.Context, drained <-chan struct{}, stop func()) {
	ch := make(chan os.Signal, 2)
	signal.Notify(ch, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP)
	ctx, drained, stopOn := SignalsOn(parent, log, ch)
	return ctx, drained, func() { signal.Stop(ch); stopOn() }
}

// SignalsOn is Signals with the signals read from ch rather than asked of
// the host: where the process runs on virtual time, a signal the host
// delivers would come from outside it.
func SignalsOn(parent context.Context, log *slog.Logger, ch <-chan os.Signal) (ctx context.Context, drained <-chan struct{}, stop func()) {
	ctx, cancel := context.WithCancelCause(parent)
	drain := make(chan struct{})
	go func() {
		select {
		case sig := <-ch:
			msg := "signal: finishing the page in flight; a second signal stops at once"
			if sig == syscall.SIGHUP {
				msg = "signal: SIGHUP stops as SIGTERM does (nothing is reloaded: restart to change a setting); finishing the page in flight; a second signal stops at once"
			}
			log.Info(msg, "signal", sig.String(), "bound", StopBound)
			close(drain)
		case <-ctx.Done():
			return
		}
		bound := clock.NewTimer(StopBound)
		defer bound.Stop()
		select {
		case <-ch:
			log.Warn("second signal: stopping now")
			cancel(ErrSecondSignal)
		case <-bound.C:
			log.Warn("the page in flight outlived the stop's bound: stopping now", "bound", StopBound)
			cancel(ErrStopBound)
		case <-ctx.Done():
		}
	}()
	return ctx, drain, func() { cancel(nil) }
}

// ErrSecondSignal and ErrStopBound say why a stop came at once, as the
// interrupted run's message tells.
var (
	ErrSecondSignal = errors.New("stopped at once by a second signal")
	ErrStopBound    = errors.New("stopped at once: the page in flight outlived the stop's bound (" + StopBound.String() + ")")
)

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
	// Observe, when set, sees every finished pass (metrics).
	Observe func(res Result, took time.Duration)
	// PassLevel is the level of the line each finished pass logs (a failed
	// pass always logs at error). run --once sets debug and logs one summary
	// line instead, so that cron mails nothing on a good run.
	PassLevel slog.Level

	mu      sync.Mutex
	running map[string]bool
}

// Once runs every pass now, one after another. It stops early on a fatal
// error (the key is rejected, the upstream cannot be reached) or when drain
// closes; the passes it did not run are not in the results.
func (r *Runner) Once(ctx context.Context, drain <-chan struct{}) []Result {
	var results []Result
	for _, p := range r.Passes {
		if stopping(drain) || ctx.Err() != nil {
			break
		}
		res, ran := r.RunPass(ctx, drain, p)
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
func (r *Runner) RunPass(ctx context.Context, drain <-chan struct{}, p *Pass) (res Result, ran bool) {
	log := r.Logger.With("region", p.Region)
	if !r.claim(p.Region) {
		log.Info("pass skipped: already running in this process")
		return Result{Region: p.Region}, false
	}
	defer r.release(p.Region)
	unlock, ok, err := r.Locker.Lock(ctx, "region:"+p.Region, LockTTL)
	if errors.Is(err, ingest.ErrUnavailable) {
		// The lease lives beside the limiter, which is down: cheap calls go
		// ahead unmetered, so the pass runs too, guarded in this process only.
		log.Warn("lease unavailable: running with the in-process guard only", "err", err)
		unlock, ok, err = func() {}, true, nil
	}
	if err != nil {
		res = Result{Region: p.Region, Status: ingest.StatusFailed, Err: fmt.Errorf("lock region %s: %w", p.Region, err)}
		res.Message = res.Err.Error()
		log.Error("pass failed", "err", res.Err)
		return res, true
	}
	if !ok {
		log.Warn("pass skipped: already running in another process (or a crashed one's lease has not expired yet)", "lease_ttl", LockTTL.String())
		return Result{Region: p.Region}, false
	}
	defer unlock()
	start := time.Now()
	res = r.guarded(ctx, drain, p)
	r.logResult(log, res, time.Since(start))
	if r.Observe != nil {
		r.Observe(res, time.Since(start))
	}
	return res, true
}

// guarded runs the pass and turns a panic into a failed result.
func (r *Runner) guarded(ctx context.Context, drain <-chan struct{}, p *Pass) (res Result) {
	defer func() {
		if v := recover(); v != nil {
			res = Result{Region: p.Region, Status: ingest.StatusFailed, Err: fmt.Errorf("panic: %v", v)}
			res.Message = res.Err.Error()
			r.Logger.Error("pass panicked", "region", p.Region, "panic", v, "stack", string(debug.Stack()))
		}
	}()
	return p.Run(ctx, drain)
}

func (r *Runner) logResult(log *slog.Logger, res Result, took time.Duration) {
	attrs := []any{"status", res.Status, "pages", res.Pages, "videos", res.Videos,
		"units", res.Units, "duration", took}
	if res.Remaining >= 0 {
		attrs = append(attrs, "remaining", res.Remaining)
	}
	if !res.RetryAt.IsZero() {
		attrs = append(attrs, "retry_at", res.RetryAt.UTC().Format(time.RFC3339))
	}
	if res.Message != "" {
		// "reason", not "msg": the handler writes msg itself, and a second
		// msg key makes a JSON line that parsers read differently.
		attrs = append(attrs, "reason", res.Message)
	}
	if res.Status == ingest.StatusFailed {
		log.Error("pass", attrs...)
		return
	}
	log.Log(context.Background(), r.PassLevel, "pass", attrs...)
}

func (r *Runner) claim(region string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.running == nil {
		r.running = map[string]bool{}
	}
	if r.running[region] {
		return false
	}
	r.running[region] = true
	return true
}

func (r *Runner) release(region string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.running, region)
}

// Daemon runs every pass on its staggered slot until drain closes, then
// waits for the passes in flight (ctx cancels them at once). A region whose
// latest slot passed without a run (lastStart before it) runs once at start.
func (r *Runner) Daemon(ctx context.Context, drain <-chan struct{}, every time.Duration, lastStart map[string]time.Time) error {
	c := cron.New(cron.WithLocation(time.UTC))
	var catchUp []*Pass
	for i, p := range r.Passes {
		s, err := Stagger(every, i, len(r.Passes))
		if err != nil {
			return fmt.Errorf("--every: %w", err)
		}
		c.Schedule(s, cron.FuncJob(func() { r.RunPass(ctx, drain, p) }))
		if s.Missed(lastStart[p.Region], time.Now()) {
			catchUp = append(catchUp, p)
		}
		r.Logger.Info("scheduled", "region", p.Region, "next_run", s.Next(time.Now()).Format(time.RFC3339))
	}
	c.Start()
	go func() {
		for _, p := range catchUp {
			if stopping(drain) {
				return
			}
			r.Logger.Info("catching up a missed slot", "region", p.Region)
			r.RunPass(ctx, drain, p)
		}
	}()
	select {
	case <-drain:
	case <-ctx.Done():
	}
	done := c.Stop()
	select {
	case <-done.Done():
	case <-ctx.Done():
	}
	r.wait(ctx)
	return nil
}

// wait returns when no pass is running or ctx is done.
func (r *Runner) wait(ctx context.Context) {
	for {
		r.mu.Lock()
		n := len(r.running)
		r.mu.Unlock()
		if n == 0 || ctx.Err() != nil {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
}

package regions

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"time"

	"github.com/ingestworks/ingest"
)

// CategoriesEvery is how often a region's category names are refreshed.
const CategoriesEvery = 24 * time.Hour

// MaxPages bounds one pass, in case the upstream never ends a chart.
const MaxPages = 20

// Pass fetches one region's chart to the end and stores it page by page.
type Pass struct {
	Region   string
	QuotaKey string
	Costs    *ingest.Costs
	Limiter  Limiter
	Source   Source
	Sink     Sink
	Logger   *slog.Logger
	Now      func() time.Time // time.Now when nil
}

// Result is how a pass ended.
type Result struct {
	Region  string
	RunID   int64
	Status  string // ingest.StatusCompleted, StatusStopped, StatusInterrupted, StatusSkipped or StatusFailed
	Message string
	Pages   int
	Videos  int
	Units   int64 // every unit the run's calls were charged, all pools
	RetryAt time.Time
	// Remaining is what the pool default had left after the run's last
	// decision, -1 when the run took no decision.
	Remaining int64
	Err       error // set when Status is failed
	// Fatal is set when no other region can succeed either: the upstream
	// rejects the key, or cannot be reached at all.
	Fatal bool

	interrupted bool // drain stopped the pass between pages
}

func (p *Pass) now() time.Time {
	if p.Now != nil {
		return p.Now()
	}
	return time.Now()
}

// Run runs the pass. ctx aborts at once; when drain is closed, the page in
// flight finishes and commits and the pass ends there.
func (p *Pass) Run(ctx context.Context, drain <-chan struct{}) Result {
	res := Result{Region: p.Region, Remaining: -1}
	if err := p.Sink.AbandonRuns(ctx, p.Region, ingest.Trending, p.now()); err != nil {
		return p.fail(res, err)
	}
	runID, err := p.Sink.StartRun(ctx, p.Region, ingest.Trending, p.now())
	if err != nil {
		return p.fail(res, fmt.Errorf("start run: %w", err))
	}
	res.RunID = runID
	res = p.classify(ctx, res, p.fetch(ctx, drain, &res))
	// The run's row is written even when ctx was cancelled: a pass must not
	// stay "running" because a second signal came.
	fin := context.WithoutCancel(ctx)
	if ferr := p.Sink.FinishRun(fin, runID, ingest.RunEnd{Status: res.Status,
		Message: res.Message, At: p.now(), RetryAt: res.RetryAt}); ferr != nil && res.Err == nil {
		res = p.fail(res, fmt.Errorf("finish run: %w", ferr))
	}
	return res
}

// fetch refreshes the categories and stores the chart. A panic becomes an
// error, so that the run's row still records how it ended.
func (p *Pass) fetch(ctx context.Context, drain <-chan struct{}, res *Result) (err error) {
	defer func() {
		if v := recover(); v != nil {
			p.Logger.Error("pass panicked", "panic", v, "stack", string(debug.Stack()))
			err = fmt.Errorf("panic: %v", v)
		}
	}()
	m := newMeter(p.Limiter, p.Sink, p.QuotaKey, p.Region, res.RunID)
	defer func() { res.Units, res.Remaining = m.total(), m.remaining }()
	if err := p.categories(ctx, m.gate); err != nil {
		return err
	}
	return p.pages(ctx, drain, m.gate, res)
}

// categories refreshes the region's category names at most once a day.
func (p *Pass) categories(ctx context.Context, gate ingest.Gate) error {
	last, err := p.Sink.CategoriesFetched(ctx, p.Region)
	if err != nil {
		return fmt.Errorf("categories: %w", err)
	}
	if p.now().Sub(last) < CategoriesEvery {
		return nil
	}
	cats, err := p.Source.Categories(ctx, gate, p.Region)
	if err != nil {
		return fmt.Errorf("categories: %w", err)
	}
	return p.Sink.SaveCategories(ctx, p.Region, cats, p.now())
}

// pages follows the chart's page tokens to the end. An invalid page token
// restarts the pass once from the first page.
//
// Each page is stored in its own transaction while the next one is on the
// wire: the store starts once the next call's quota is taken (so the two do
// not queue on the one SQLite writer), and the pass waits for it before
// going on, so pages land in order and a failure stops the pass.
func (p *Pass) pages(ctx context.Context, drain <-chan struct{}, gate ingest.Gate, res *Result) error {
	w := &pageWriter{pass: p, ctx: context.WithoutCancel(ctx), res: res}
	gate = w.after(gate)
	token, restarted := "", false
	for n := 1; n <= MaxPages; n++ {
		if stopping(drain) {
			res.Message, res.interrupted = "interrupted: stopped between pages", true
			return w.flush()
		}
		page, err := p.Source.Trending(ctx, gate, p.Region, token)
		if ferr := w.flush(); ferr != nil {
			return ferr
		}
		if errors.Is(err, ingest.ErrInvalidPageToken) && !restarted {
			p.Logger.Warn("invalid page token; restarting the pass once", "region", p.Region, "page", n)
			token, restarted, n = "", true, 0
			continue
		}
		if err != nil {
			return fmt.Errorf("page %d: %w", n, err)
		}
		page.Number = n
		w.queue(page)
		if token = page.NextToken; token == "" {
			return w.flush()
		}
	}
	p.Logger.Warn("chart longer than the page cap; stopping there", "region", p.Region, "pages", MaxPages)
	return w.flush()
}

// pageWriter stores one page in the background while the next is fetched.
// Everything but the store itself runs on the pass's goroutine.
type pageWriter struct {
	pass    *Pass
	ctx     context.Context
	res     *Result
	pending *ingest.Page
	saving  chan error
	saved   ingest.Page
}

func (w *pageWriter) queue(page ingest.Page) { w.pending = &page }

// after wraps gate so that the queued page starts storing once the next
// call has its quota.
func (w *pageWriter) after(gate ingest.Gate) ingest.Gate {
	return func(ctx context.Context, op string) (func(context.Context) error, error) {
		giveBack, err := gate(ctx, op)
		w.start()
		return giveBack, err
	}
}

func (w *pageWriter) start() {
	if w.pending == nil {
		return
	}
	page := *w.pending
	w.pending, w.saved, w.saving = nil, page, make(chan error, 1)
	go func() { w.saving <- w.pass.Sink.SavePage(w.ctx, w.res.RunID, page) }()
}

// flush stores the queued page, if any, and waits for it.
func (w *pageWriter) flush() error {
	w.start()
	if w.saving == nil {
		return nil
	}
	err := <-w.saving
	w.saving = nil
	if err != nil {
		return fmt.Errorf("store page %d: %w", w.saved.Number, err)
	}
	w.res.Pages++
	w.res.Videos += len(w.saved.Videos)
	return nil
}

func stopping(drain <-chan struct{}) bool {
	select {
	case <-drain:
		return true
	default:
		return false
	}
}

// classify turns how the pass ended into a status. A refusal or an
// exhausted upstream quota is a clean stop, not a failure.
func (p *Pass) classify(ctx context.Context, res Result, err error) Result {
	if err == nil {
		res.Status = ingest.StatusCompleted
		if res.interrupted {
			res.Status = ingest.StatusInterrupted
		}
		return res
	}
	if end, ok, berr := quotaStop(ctx, p.Costs, p.Limiter, p.Sink, p.QuotaKey, err); ok {
		if berr != nil {
			return p.fail(res, berr)
		}
		res.Status, res.Message, res.RetryAt = end.Status, end.Message, end.RetryAt
		return res
	}
	switch {
	case errors.Is(err, ingest.ErrNoChart):
		res.Status, res.Message = ingest.StatusSkipped, "no chart: the upstream has no most-popular chart for "+p.Region
	case errors.Is(err, ingest.ErrBadKey):
		res = p.fail(res, err)
		res.Fatal = true
	case Unreachable(err):
		res = p.fail(res, err)
		res.Fatal = true
	default:
		res = p.fail(res, err)
	}
	return res
}

func (p *Pass) fail(res Result, err error) Result {
	res.Status, res.Err, res.Message = ingest.StatusFailed, err, err.Error()
	return res
}

// DefaultPool is the pool that stands for the whole upstream quota.
const DefaultPool = "default"

// BlockedPools is which pools an exhausted upstream quota blocks.
func BlockedPools(costs *ingest.Costs, e *ingest.QuotaExhaustedError) []string {
	if !e.PerMethod {
		return []string{DefaultPool}
	}
	charges, _ := costs.Op(e.Op)
	var pools []string
	for _, c := range charges {
		if c.Pool != DefaultPool {
			pools = append(pools, c.Pool)
		}
	}
	if len(pools) == 0 {
		return []string{DefaultPool}
	}
	return pools
}

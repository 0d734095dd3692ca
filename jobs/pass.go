package jobs

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/regions"
)

// CategoriesEvery is how often a region's category names are refreshed.
const CategoriesEvery = 24 * time.Hour

// MaxPages bounds one pass, in case the upstream never ends a chart.
const MaxPages = 20

// Pass fetches one chart to the end, or to its region's depth, and
// stores it page by page: a region's unfiltered chart, or with Category
// the chart of one video category there.
type Pass struct {
	Region   string
	Category string // a videoCategoryId; "" the unfiltered chart
	// Pages is how many pages the pass reads at most (the region's depth,
	// regions.Chart.Pages): it then ends as completed, the chart's top
	// stored. Zero reads to the chart's end.
	Pages int
	// Tier is the region's tier (regions.Chart): its chart's period is
	// Tier x --every. Zero is tier 1.
	Tier     int
	QuotaKey string
	Costs    *ingest.Costs
	Limiter  Limiter
	Source   Source
	Sink     Sink
	// Categories keeps the region's category names, fetched once a day.
	Categories CategoryStore
	Logger     *slog.Logger
	// Drain, once closed, ends the pass between pages: the page in flight
	// finishes and commits. nil never closes.
	Drain <-chan struct{}
	Clock ingest.Clock // the house's; required
}

// PassResult is how a pass ended.
type PassResult struct{ Outcome }

func (p *Pass) now() time.Time { return required(p.Clock, "Pass").Now() }

// Chart names the pass's chart: the region (US), or region/category
// (US/10). Leases, schedules, statuses and logs go by it.
func (p *Pass) Chart() string {
	return ingest.ChartName(p.Region, p.Category)
}

func (p *Pass) job(slot time.Time) job {
	return job{region: p.Region, name: p.Chart(), quotaKey: p.QuotaKey, costs: p.Costs,
		limiter: p.Limiter, store: p.Sink, logger: p.Logger, clock: required(p.Clock, "Pass"),
		start: func(ctx context.Context, at time.Time) (int64, error) {
			if !slot.IsZero() {
				return p.Sink.StartSlotRun(ctx, p.Region, p.Category, at, slot)
			}
			return p.Sink.StartRun(ctx, p.Region, p.Category, ingest.Trending, at)
		}}
}

func (p *Pass) abandon(ctx context.Context) error {
	return p.Sink.AbandonRuns(ctx, p.Region, p.Category, ingest.Trending, p.now())
}

// Run runs the pass, no slot having started it. ctx aborts at once;
// Drain ends it between pages.
func (p *Pass) Run(ctx context.Context) PassResult { return p.RunFor(ctx, time.Time{}) }

// RunFor runs the pass a daemon started for slot, which its run records
// beside its start: a restart then counts it as that slot's however late
// it started.
func (p *Pass) RunFor(ctx context.Context, slot time.Time) PassResult {
	if err := said(p.Sink, p.abandon(ctx)); err != nil {
		out := Outcome{Region: p.Chart(), Remaining: -1}
		out.fail(fmt.Errorf("abandon runs: %w", err))
		out.Fatal = errors.Is(err, ingest.ErrDiskFull) || errors.Is(err, ingest.ErrDamaged)
		return PassResult{out}
	}
	return PassResult{p.job(slot).run(ctx, func(m *meter, out *Outcome) error {
		if err := p.categories(ctx, m.gate); err != nil {
			return err
		}
		return p.pages(ctx, m.gate, out)
	})}
}

// Entry is the pass as an entry of a schedule: a region's chart, or a
// category's, named by its chart.
func (p *Pass) Entry() Entry {
	kind := KindChart
	if p.Category != "" {
		kind = KindCategoryChart
	}
	return Entry{Name: p.Chart(), Kind: kind, Tier: max(p.Tier, 1), Pages: p.Pages, run: func(ctx context.Context, slot time.Time) Ended {
		res := p.RunFor(ctx, slot)
		did := []any{ingest.LogPages, res.Pages, ingest.LogVideos, res.Videos, ingest.LogUnits, res.TotalUnits()}
		if res.Remaining >= 0 {
			did = append(did, ingest.LogRemaining, res.Remaining)
		}
		return Ended{RunEnd: res.RunEnd, Err: res.Err, Fatal: res.Fatal, Message: "pass", Did: did, Pass: &res, Units: res.Units, Daily: res.Daily}
	}}
}

// categories refreshes the region's category names at most once a day.
func (p *Pass) categories(ctx context.Context, gate ingest.Gate) error {
	last, err := p.Categories.CategoriesFetched(ctx, p.Region)
	if err != nil {
		return fmt.Errorf("categories: %w", err)
	}
	if p.now().Sub(last) < CategoriesEvery {
		return nil
	}
	// In the region's language: the ids, and the English names, are the
	// same in every region, so the one call a day gives all a region adds.
	cats, err := p.Source.Categories(ctx, gate, p.Region, regions.Language(p.Region))
	if err != nil {
		return fmt.Errorf("categories: %w", err)
	}
	return p.Categories.SaveCategories(ctx, p.Region, cats, p.now())
}

// pages follows the chart's page tokens to the end, or to the pass's
// depth (Pages): a chart read to its depth is complete. An invalid page token
// restarts the pass once from the first page.
//
// Each page is stored in its own transaction while the next one is on the
// wire: the store starts once the next call's quota is taken (so the two do
// not queue on the one SQLite writer), and the pass waits for it before
// going on, so pages land in order and a failure stops the pass.
func (p *Pass) pages(ctx context.Context, gate ingest.Gate, out *Outcome) error {
	w := &pageWriter{pass: p, ctx: context.WithoutCancel(ctx), out: out}
	gate = w.after(gate)
	token, restarted := "", false
	for n := 1; n <= MaxPages; n++ {
		if stopping(p.Drain) {
			out.interrupted()
			return w.flush()
		}
		page, err := p.Source.Chart(ctx, gate, p.Region, p.Category, token)
		if ferr := w.flush(); ferr != nil {
			return ferr
		}
		if errors.Is(err, ingest.ErrInvalidPageToken) && !restarted {
			p.Logger.Warn("invalid page token; restarting the pass once", ingest.LogPage, n)
			token, restarted, n = "", true, 0
			continue
		}
		if err != nil {
			return fmt.Errorf("page %d: %w", n, err)
		}
		page.Number = n
		w.queue(page)
		if token = page.NextToken; token == "" || n == p.Pages {
			return w.flush()
		}
	}
	p.Logger.Warn("chart longer than the page cap; stopping there", ingest.LogPages, MaxPages)
	return w.flush()
}

// pageWriter stores one page in the background while the next is fetched.
// Everything but the store itself runs on the pass's goroutine.
type pageWriter struct {
	pass    *Pass
	ctx     context.Context
	out     *Outcome
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
	go func() { w.saving <- w.pass.Sink.SavePage(w.ctx, w.out.RunID, page) }()
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
	w.out.Pages = max(w.out.Pages, w.saved.Number)
	w.out.stored(w.saved.Videos)
	return nil
}

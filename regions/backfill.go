package regions

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/ingestworks/ingest"
)

// SearchMaxPages is the most pages one search yields: the upstream returns
// at most 500 results (10 pages of 50) for a query.
const SearchMaxPages = 10

// Searcher finds videos by search and details them.
type Searcher interface {
	SearchPage(ctx context.Context, gate ingest.Gate, q ingest.SearchQuery, pageToken string) (ids []string, next string, err error)
	Videos(ctx context.Context, gate ingest.Gate, ids []string) ([]ingest.Video, error)
}

// BackfillStore keeps a backfill's pages and its cursor.
type BackfillStore interface {
	StartRun(ctx context.Context, region string, kind ingest.PageKind, at time.Time) (runID int64, err error)
	FinishRun(ctx context.Context, runID int64, end ingest.RunEnd) error
	RecordCall(ctx context.Context, call ingest.Call) error
	RecordBlock(ctx context.Context, b ingest.Block) error
	RecordGiveBack(ctx context.Context, call ingest.Call) error
	Cursor(ctx context.Context, key string) (ingest.Cursor, bool, error)
	SaveSearchPage(ctx context.Context, runID int64, page ingest.Page, cur ingest.Cursor) error
}

// Backfill searches one region's videos published in a window, page by
// page, saving a cursor with every page so that it can resume.
type Backfill struct {
	// ID names the backfill; the same ID resumes it.
	ID ingest.BackfillID
	// Query is the search. Its Before is the --until, or for an open-ended
	// backfill now; a backfill that resumes keeps the Before of its first
	// page instead, so that its page tokens stay valid.
	Query    ingest.SearchQuery
	MaxUnits int64 // units of the default pool this invocation may spend; 0: no cap
	QuotaKey string
	Costs    *ingest.Costs
	Limiter  Limiter
	Source   Searcher
	Store    BackfillStore
	Logger   *slog.Logger
	// Progress, when set, sees the backfill after every stored page.
	Progress func(BackfillResult)
}

// BackfillResult is how far a backfill got in this invocation.
type BackfillResult struct {
	Status  string // completed, stopped, interrupted or failed
	Message string
	Resumed bool // it continued an earlier invocation's cursor
	Pages   int
	Videos  int
	Units   map[string]int64 // spent by this invocation, by pool
	Cursor  ingest.Cursor    // totals over every invocation
	RetryAt time.Time
	Err     error
	// Remaining is what the default pool had left after the last decision,
	// -1 before any.
	Remaining int64

	pageBase    int64 // units (all pools) spent before the current page
	interrupted bool  // a signal stopped it between pages
}

// CursorKey names the backfill so that the same command resumes it.
func (b *Backfill) CursorKey() string { return b.ID.Key() }

// PageCost is what one backfill page costs: a search and the details of
// its videos.
func (b *Backfill) PageCost() (map[string]int64, error) {
	cost := map[string]int64{}
	for _, op := range []string{ingest.OpSearchList, ingest.OpVideosList} {
		charges, err := b.Costs.Op(op)
		if err != nil {
			return nil, err
		}
		for _, c := range charges {
			cost[c.Pool] += c.Units
		}
	}
	return cost, nil
}

// Run runs the backfill until the search ends, the quota or --max-units
// says no, or drain closes.
func (b *Backfill) Run(ctx context.Context, drain <-chan struct{}) BackfillResult {
	res := BackfillResult{Units: map[string]int64{}, Remaining: -1}
	cur, ok, err := b.Store.Cursor(ctx, b.CursorKey())
	if err != nil {
		return failBackfill(res, err)
	}
	if !ok {
		cur = ingest.Cursor{Key: b.CursorKey(), ID: b.ID, Before: b.Query.Before}
	}
	if !cur.Before.IsZero() {
		b.Query.Before = cur.Before
	}
	res.Cursor, res.Resumed = cur, ok && cur.Pages > 0
	if cur.Done {
		res.Status, res.Message = ingest.StatusCompleted, "already complete"
		return res
	}
	runID, err := b.Store.StartRun(ctx, b.Query.Region, ingest.Search, time.Now())
	if err != nil {
		return failBackfill(res, err)
	}
	m := newMeter(b.Limiter, b.Store, b.QuotaKey, b.Query.Region, runID)
	res.Units = m.units
	err = b.pages(ctx, drain, m, &res)
	res = b.classify(ctx, res, err)
	fin := context.WithoutCancel(ctx)
	if ferr := b.Store.FinishRun(fin, runID, ingest.RunEnd{Status: res.Status,
		Message: res.Message, At: time.Now(), RetryAt: res.RetryAt}); ferr != nil && res.Err == nil {
		res = failBackfill(res, ferr)
	}
	return res
}

func (b *Backfill) pages(ctx context.Context, drain <-chan struct{}, m *meter, res *BackfillResult) error {
	cost, err := b.PageCost()
	if err != nil {
		return err
	}
	for res.Cursor.Pages < SearchMaxPages {
		if stopping(drain) {
			res.Message = "interrupted: stopped between pages"
			res.interrupted = true
			return nil
		}
		if b.MaxUnits > 0 && Sum(res.Units)+Sum(cost) > b.MaxUnits {
			res.Message = fmt.Sprintf("--max-units %d reached", b.MaxUnits)
			return nil
		}
		if err := b.page(ctx, m, res); err != nil || res.Cursor.Done {
			return err
		}
	}
	res.Cursor.Done = true
	return nil
}

// page searches one page, details its videos and stores both with the
// cursor in one transaction.
func (b *Backfill) page(ctx context.Context, m *meter, res *BackfillResult) error {
	defer func() { res.Remaining = m.remaining }()
	gate, runID := m.gate, m.runID
	n := res.Cursor.Pages + 1
	ids, next, err := b.Source.SearchPage(ctx, gate, b.Query, res.Cursor.PageToken)
	if err != nil {
		return fmt.Errorf("search page %d: %w", n, err)
	}
	var videos []ingest.Video
	if len(ids) > 0 {
		if videos, err = b.Source.Videos(ctx, gate, ids); err != nil {
			return fmt.Errorf("details of search page %d: %w", n, err)
		}
	}
	page := ingest.Page{Kind: ingest.Search, Region: b.Query.Region, Number: n, Videos: videos,
		NextToken: next, Fetched: time.Now()}
	cur := res.Cursor
	cur.PageToken, cur.Pages, cur.Videos, cur.Done = next, n, cur.Videos+len(videos), next == ""
	cur.Units = res.Cursor.Units + Sum(res.Units) - res.pageBase
	for _, v := range videos {
		if cur.Reached.IsZero() || v.PublishedAt.Before(cur.Reached) {
			cur.Reached = v.PublishedAt
		}
	}
	if err := b.Store.SaveSearchPage(context.WithoutCancel(ctx), runID, page, cur); err != nil {
		return fmt.Errorf("store search page %d: %w", n, err)
	}
	res.pageBase = Sum(res.Units)
	res.Cursor, res.Pages, res.Videos = cur, res.Pages+1, res.Videos+len(videos)
	res.Remaining = m.remaining
	if b.Progress != nil {
		b.Progress(*res)
	}
	return nil
}

func (b *Backfill) classify(ctx context.Context, res BackfillResult, err error) BackfillResult {
	if err == nil {
		switch {
		case res.Cursor.Done:
			res.Status = ingest.StatusCompleted
		case res.interrupted:
			res.Status = ingest.StatusInterrupted
		default:
			res.Status = ingest.StatusStopped
		}
		return res
	}
	end, ok, berr := quotaStop(ctx, b.Costs, b.Limiter, b.Store, b.QuotaKey, err)
	switch {
	case berr != nil:
		return failBackfill(res, berr)
	case ok:
		res.Status, res.Message, res.RetryAt = end.Status, end.Message, end.RetryAt
		return res
	}
	return failBackfill(res, err)
}

func failBackfill(res BackfillResult, err error) BackfillResult {
	res.Status, res.Err, res.Message = ingest.StatusFailed, err, err.Error()
	return res
}

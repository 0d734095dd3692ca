package jobs

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"time"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/costs"
)

// SearchMaxPages is the most pages one search yields: the upstream returns
// at most 500 results (10 pages of 50) for a query.
const SearchMaxPages = 10

// Searcher finds videos by search and details them.
type Searcher interface {
	SearchPage(ctx context.Context, gate ingest.Gate, q ingest.SearchQuery, pageToken string) (ids []string, next string, err error)
	Videos(ctx context.Context, gate ingest.Gate, ids []string) ([]ingest.Video, error)
}

// BackfillStore keeps a backfill's runs, pages and cursor.
type BackfillStore interface {
	RunStore
	Cursor(ctx context.Context, key string) (ingest.Cursor, bool, error)
	SaveSearchPage(ctx context.Context, runID int64, page ingest.Page, cur ingest.Cursor) error
	// SavePending keeps the cursor with the answered search's videos
	// (Cursor.Pending) before their details are asked for.
	SavePending(ctx context.Context, cur ingest.Cursor, at time.Time) error
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
	MaxUnits int64 // units (all pools) this invocation may spend; 0: no cap
	// Share names what set MaxUnits in the stop message; "" is the
	// operator's --max-units.
	Share    string
	QuotaKey string
	Costs    *ingest.Costs
	Limiter  Limiter
	Source   Searcher
	Store    BackfillStore
	Logger   *slog.Logger
	// Drain, once closed, ends the backfill between pages. nil never closes.
	Drain <-chan struct{}
	Clock ingest.Clock // the house's; required
	// Progress, when set, sees the backfill after every stored page.
	Progress func(BackfillResult)
}

// BackfillResult is how far a backfill got in this invocation.
type BackfillResult struct {
	Outcome
	Resumed bool          // it continued an earlier invocation's cursor
	Cursor  ingest.Cursor // totals over every invocation
	// Left is what each pool the backfill drew from had left after its
	// last decision (Remaining is the default pool's alone, which a page
	// of no video never draws from).
	Left map[string]int64

	pageBase int64 // units (all pools) spent before the current page
}

// PageCost is what one backfill page costs: a search and the details of
// its videos (ingest.FetchSearchPage).
func (b *Backfill) PageCost() (map[string]int64, error) {
	return costs.PerFetch(b.Costs, ingest.FetchSearchPage)
}

// Run runs the backfill until the search ends, the quota or --max-units
// says no, or Drain closes.
func (b *Backfill) Run(ctx context.Context) BackfillResult {
	res := BackfillResult{Outcome: Outcome{Region: b.Query.Region, Units: map[string]int64{}, Remaining: -1}}
	cur, ok, err := b.Store.Cursor(ctx, b.ID.Key())
	if err != nil {
		res.fail(err)
		return res
	}
	if !ok {
		cur = ingest.Cursor{Key: b.ID.Key(), ID: b.ID, Before: b.Query.Before}
	}
	if !cur.Before.IsZero() {
		b.Query.Before = cur.Before
	}
	res.Cursor, res.Resumed = cur, ok && cur.Pages > 0
	if cur.Done {
		res.Status, res.Message = ingest.StatusCompleted, "already complete"
		return res
	}
	res.Outcome = b.job().run(ctx, func(m *meter, out *Outcome) error {
		res.Outcome = *out
		err := b.pages(ctx, m, &res)
		*out = res.Outcome
		return err
	})
	return res
}

func (b *Backfill) job() job {
	return job{region: b.Query.Region, quotaKey: b.QuotaKey, costs: b.Costs,
		limiter: b.Limiter, store: b.Store, logger: b.Logger, clock: required(b.Clock, "Backfill"),
		start: func(ctx context.Context, at time.Time) (int64, error) {
			return b.Store.StartRun(ctx, b.Query.Region, "", ingest.Search, at)
		}}
}

func (b *Backfill) pages(ctx context.Context, m *meter, res *BackfillResult) error {
	cost, err := b.PageCost()
	if err != nil {
		return err
	}
	for res.Cursor.Pages < SearchMaxPages {
		if stopping(b.Drain) {
			res.interrupted()
			return nil
		}
		if b.MaxUnits > 0 && Sum(res.Units)+Sum(cost) > b.MaxUnits {
			res.Status, res.Message = ingest.StatusStopped, fmt.Sprintf("--max-units %d reached", b.MaxUnits)
			if b.Share != "" {
				res.Message = fmt.Sprintf("%s (%d units) reached", b.Share, b.MaxUnits)
			}
			return nil
		}
		if err := b.page(ctx, m, res); err != nil || res.Cursor.Done {
			return err
		}
	}
	res.Cursor.Done = true
	return nil
}

// page searches one page (or takes the one whose search a run before
// paid for: Cursor.Pending), details its videos and stores both with the
// cursor in one transaction. The search's answer is kept with the cursor
// before its details are asked for, so that a signal, a refusal of the
// details or a crash between the two calls costs no search twice.
func (b *Backfill) page(ctx context.Context, m *meter, res *BackfillResult) error {
	gate, runID := m.gate, m.by.RunID
	n := res.Cursor.Pages + 1
	ids, next := res.Cursor.Pending, res.Cursor.PageToken
	if len(ids) == 0 {
		var err error
		if ids, next, err = b.Source.SearchPage(ctx, gate, b.Query, res.Cursor.PageToken); err != nil {
			return fmt.Errorf("search page %d: %w", n, err)
		}
		if len(ids) > 0 {
			pend := res.Cursor
			pend.Pending, pend.PageToken = ids, next
			pend.Units = res.Cursor.Units + Sum(res.Units) - res.pageBase
			if err := b.Store.SavePending(context.WithoutCancel(ctx), pend, b.Clock.Now()); err != nil {
				return err
			}
			res.pageBase, res.Cursor = Sum(res.Units), pend
		}
	}
	var videos []ingest.Video
	if len(ids) > 0 {
		var err error
		if videos, err = b.Source.Videos(ctx, gate, ids); err != nil {
			return fmt.Errorf("details of search page %d: %w", n, err)
		}
	}
	page := ingest.Page{Kind: ingest.Search, Region: b.Query.Region, Number: n, Videos: videos,
		NextToken: next, Fetched: b.Clock.Now()}
	cur := res.Cursor
	cur.PageToken, cur.Pages, cur.Videos, cur.Done, cur.Pending = next, n, cur.Videos+len(videos), next == "", nil
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
	res.Remaining, res.Left = m.remaining, maps.Clone(m.left)
	if b.Progress != nil {
		b.Progress(*res)
	}
	return nil
}

// Summary says what the backfill spent and stored, in this invocation and
// in all, and when the quota has room again; it returns the failure, if
// the backfill failed, as the operator reads it.
func (r BackfillResult) Summary(out io.Writer) error {
	if r.Resumed {
		fmt.Fprintf(out, "resumed the backfill at page %d\n", r.Cursor.Pages-r.Pages+1)
	}
	fmt.Fprintf(out, "backfill %s: %s; this run: %d pages, %d videos, %s units; in all: %d pages, %d videos\n",
		r.Region, r.Status, r.Pages, r.Videos, costs.PoolUnits(r.Units), r.Cursor.Pages, r.Cursor.Videos)
	if r.Message != "" {
		fmt.Fprintf(out, "  %s\n", r.Message)
	}
	if !r.RetryAt.IsZero() {
		fmt.Fprintf(out, "  the quota has room again at %s; run the same command then to continue\n", r.RetryAt.UTC().Format(time.RFC3339))
	} else if r.Status == ingest.StatusStopped || r.Status == ingest.StatusInterrupted {
		fmt.Fprintln(out, "  run the same command again to continue")
	}
	switch {
	case r.Status != ingest.StatusFailed:
		return nil
	case errors.Is(r.Err, ingest.ErrUnavailable):
		return fmt.Errorf("the quota limiter cannot be reached, and a search is refused while it is (its pool has no fail_open): nothing was sent upstream: %w",
			r.Err)
	}
	return r.Err
}

// Cursors are where a backfill got to, by its key.
type Cursors interface {
	Cursor(ctx context.Context, key string) (ingest.Cursor, bool, error)
}

// PagesLeft is how many pages b may still fetch, as its run counts them
// (Run): none once its cursor says it is complete, the search's last
// pages when it resumes, every page with restart. A run and its dry run
// plan by it.
func (b *Backfill) PagesLeft(ctx context.Context, cursors Cursors, restart bool) (int, error) {
	if restart {
		return SearchMaxPages, nil
	}
	cur, ok, err := cursors.Cursor(ctx, b.ID.Key())
	switch {
	case err != nil:
		return 0, err
	case !ok:
		return SearchMaxPages, nil
	case cur.Done:
		return 0, nil
	}
	return max(0, SearchMaxPages-cur.Pages), nil
}

// Forgetter is where a backfill's cursor is forgotten (--restart).
type Forgetter interface {
	DeleteCursor(ctx context.Context, key string) error
}

// Restart forgets where b got to, so that it runs from its first page,
// and says so on out.
func (b *Backfill) Restart(ctx context.Context, cursors Forgetter, out io.Writer) error {
	if err := cursors.DeleteCursor(ctx, b.ID.Key()); err != nil {
		return err
	}
	fmt.Fprintln(out, "restarting the backfill from its first page (--restart)")
	return nil
}

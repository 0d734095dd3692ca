package wiring

// What `ingest backfill` does once its flags are checked: the pipeline
// opened for one backfill, its share of what the daemon's plan leaves
// taken (without --max-units), and its pages fetched until done, a
// refusal, its cap or a signal.

import (
	"context"
	"io"

	"github.com/ingestworks/ingest/jobs"
	"github.com/ingestworks/ingest/report"
)

// Backfill is a backfill as its checked flags give it.
type Backfill struct {
	Job *jobs.Backfill
	// Restart forgets where the backfill got to (--restart).
	Restart bool
	// Out is where the share taken, the restart and the summary are said.
	Out io.Writer
	// Begin and End, when set, frame the pages' fetching: the progress
	// bar's start and finish.
	Begin, End func()
}

// Backfill runs b for apiKey spending on quotaKey, on the pipeline as
// every command that calls the upstream opens it, stopping at the first
// signal with the page in flight stored.
func (h *Host) Backfill(ctx context.Context, apiKey, quotaKey string, b Backfill) error {
	p, err := h.OpenPipeline(ctx, apiKey, quotaKey)
	if err != nil {
		return err
	}
	defer p.Close()
	release, err := h.Working(ctx, p)
	if err != nil {
		return err
	}
	defer release()
	job := b.Job
	left, err := PagesLeft(ctx, p.DB, job, b.Restart)
	if err != nil {
		return err
	}
	share := func() (*report.Freshness, error) { return h.PlanShare(ctx, p.DB, p.Limiter, p.QuotaKey) }
	if ok, err := report.Shared(b.Out, job, left, share); err != nil || !ok {
		return err
	}
	if b.Restart {
		if err := job.Restart(ctx, p.DB, b.Out); err != nil {
			return err
		}
	}
	ctx, drain, stop := h.signals(ctx)
	defer stop()
	job.QuotaKey, job.Limiter, job.Source, job.Store = p.QuotaKey, jobs.Stopping(p.Limiter, drain), p.Source, p.DB
	job.Drain = drain
	if b.Begin != nil {
		b.Begin()
	}
	res := job.Run(ctx)
	if b.End != nil {
		b.End()
	}
	return res.Summary(b.Out)
}

// PagesLeft is how many pages the backfill may still fetch
// (jobs.Backfill.PagesLeft); every page without a database (db nil).
func PagesLeft(ctx context.Context, db *Database, job *jobs.Backfill, restart bool) (int, error) {
	if db == nil {
		return jobs.SearchMaxPages, nil
	}
	return job.PagesLeft(ctx, db, restart)
}

// PlanShare is what the daemon's recorded schedule in db leaves a
// backfill until the pools' reset (report.PlanShare), staggered as the
// daemon staggers it; db nil: no schedule, the pools whole.
func (h *Host) PlanShare(ctx context.Context, db *Database, lim report.StateReader, key string) (*report.Freshness, error) {
	if db == nil {
		return report.PlanShare(ctx, nil, lim, h.Costs, key, newPacer, h.now())
	}
	return report.PlanShare(ctx, db, lim, h.Costs, key, newPacer, h.now())
}

package main

import (
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/costs"
	"github.com/ingestworks/ingest/jobs"
	"github.com/ingestworks/ingest/util/termbar"
)

// progress shows a backfill's pages as a bar on a terminal, and as log
// lines otherwise.
type progress struct {
	bar *termbar.Bar
	s   *settings
	job *jobs.Backfill
}

func newProgress(out io.Writer, s *settings, job *jobs.Backfill) *progress {
	return &progress{bar: termbar.New(out, jobs.SearchMaxPages, "backfill "+job.Query.Region), s: s, job: job}
}

// update says a stored page: the units spent in every pool (a page is a
// search, in the search pool, and the details of its videos, in the
// default pool), and what each pool drawn from has left.
func (p *progress) update(res jobs.BackfillResult) {
	spent, left := costs.PoolUnits(res.Units), costs.PoolUnits(res.Left)
	if p.bar != nil {
		p.bar.Describe(fmt.Sprintf("backfill %s: %d videos, %s units spent, %s left",
			p.job.Query.Region, res.Cursor.Videos, spent, left))
		p.bar.Set(res.Cursor.Pages)
		return
	}
	p.s.logger.Info("backfill page", ingest.LogRegion, p.job.Query.Region, ingest.LogPage, res.Cursor.Pages,
		ingest.LogVideos, res.Cursor.Videos, ingest.LogUnits, jobs.Sum(res.Units), "units_by_pool", spent, "left", left)
}

// progressEvery is how often long work says where it is when no terminal
// shows a bar: often enough that a log under cron or a pipe shows it
// alive, seldom enough to stay readable.
const progressEvery = 10 * time.Second

// progressLog logs how far long work (a copy, an export, a prune) has gone, at
// most once every progressEvery: the rows done, the rate, and, when the
// total is known, what remains.
type progressLog struct {
	log         *slog.Logger
	msg         string
	now         func() time.Time
	start, last time.Time
}

func newProgressLog(log *slog.Logger, msg string, now func() time.Time) *progressLog {
	return &progressLog{log: log, msg: msg, now: now}
}

// at is told the rows done of total (-1 or 0: unknown).
func (p *progressLog) at(done, total int64) {
	now := p.now()
	if p.start.IsZero() {
		p.start, p.last = now, now
		return
	}
	if now.Sub(p.last) < progressEvery {
		return
	}
	p.last = now
	rate := float64(done) / now.Sub(p.start).Seconds()
	attrs := []any{"rows", done, "rows_per_second", int64(rate)}
	if total > 0 {
		left := max(total-done, 0)
		attrs = append(attrs, "total", total, "remaining", left)
		if rate > 0 {
			attrs = append(attrs, "eta", (time.Duration(float64(left)/rate) * time.Second).String())
		}
	}
	p.log.Info(p.msg, attrs...)
}

package main

import (
	"fmt"
	"io"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/internal/termbar"
	"github.com/ingestworks/ingest/jobs"
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

func (p *progress) update(res jobs.BackfillResult) {
	spent := res.Units[ingest.DefaultPool]
	if p.bar != nil {
		p.bar.Describe(fmt.Sprintf("backfill %s: %d videos, %d units spent, %d left",
			p.job.Query.Region, res.Cursor.Videos, spent, res.Remaining))
		p.bar.Set(res.Cursor.Pages)
		return
	}
	p.s.logger.Info("backfill page", ingest.LogRegion, p.job.Query.Region, ingest.LogPage, res.Cursor.Pages,
		ingest.LogVideos, res.Cursor.Videos, ingest.LogUnits, spent, ingest.LogRemaining, res.Remaining)
}

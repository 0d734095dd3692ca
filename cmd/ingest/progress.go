package main

import (
	"fmt"
	"io"
	"os"

	"github.com/mattn/go-isatty"
	"github.com/schollz/progressbar/v3"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/jobs"
)

// progress shows a bar on a terminal and plain log lines otherwise.
type progress struct {
	bar *progressbar.ProgressBar
	s   *settings
	job *jobs.Backfill
}

func newProgress(out io.Writer, s *settings, job *jobs.Backfill) *progress {
	p := &progress{s: s, job: job}
	if f, ok := out.(*os.File); ok && isatty.IsTerminal(f.Fd()) {
		p.bar = progressbar.NewOptions(jobs.SearchMaxPages,
			progressbar.OptionSetWriter(os.Stderr),
			progressbar.OptionSetDescription("backfill "+job.Query.Region),
			progressbar.OptionShowCount(),
			progressbar.OptionSetWidth(30),
			progressbar.OptionClearOnFinish())
	}
	return p
}

func (p *progress) start() {
	if p.bar != nil {
		_ = p.bar.RenderBlank()
	}
}

func (p *progress) update(res jobs.BackfillResult) {
	spent := res.Units[ingest.DefaultPool]
	if p.bar != nil {
		p.bar.Describe(fmt.Sprintf("backfill %s: %d videos, %d units spent, %d left",
			p.job.Query.Region, res.Cursor.Videos, spent, res.Remaining))
		_ = p.bar.Set(res.Cursor.Pages)
		return
	}
	p.s.logger.Info("backfill page", ingest.LogRegion, p.job.Query.Region, ingest.LogPage, res.Cursor.Pages,
		ingest.LogVideos, res.Cursor.Videos, ingest.LogUnits, spent, ingest.LogRemaining, res.Remaining)
}

func (p *progress) finish() {
	if p.bar != nil {
		_ = p.bar.Finish()
	}
}

package wiring

// The readers' site as files: the site serve --public builds, asked in
// the process for every page a reader reaches, written by publish/.

import (
	"context"
	"fmt"
	"time"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/clock"
	"github.com/ingestworks/ingest/publish"
	"github.com/ingestworks/ingest/ratelimit"
	"github.com/ingestworks/ingest/web"
)

// Publish is `ingest publish` (and run --publish) as its checked flags
// give it.
type Publish struct {
	// Dir is the directory the site is written into.
	Dir string
	// Serve is the site as serve --public would build it: its schedule,
	// the public address its links are under, what its pages show.
	Serve Serve
	// SearchURL is where the pages' search form points; "" leaves it out,
	// since a directory answers no search.
	SearchURL string
	// Progress is told the pages asked of those known so far; nil for
	// none.
	Progress func(done, known int)
	// Only, when not nil, makes the publish a partial one over a directory
	// published whole before: these paths, what the data changed, and the
	// pages they link that the directory does not hold (publish.Site.Only).
	Only []string
}

// publishPlans meter the publish's own asks of its site: one client
// asking every page at once, never a reader, which the anonymous plan of
// serve would refuse part way.
var publishPlans = func() *ratelimit.APIPlans {
	p, err := ratelimit.ParseAPIPlans("the publish's plans", []byte("plans:\n  anonymous: {limit: 1000000, window: 1s, burst: 1000000}\n"))
	if err != nil {
		panic(err)
	}
	return p
}()

// Publish writes the readers' site over db into p.Dir: the site serve
// --public builds, with the search pointed at p.SearchURL, asked in the
// process for every chart, its JSON and feed, the pages they link, the
// sitemap and robots.txt.
func (h *Host) Publish(ctx context.Context, db *Database, p Publish) (publish.Result, error) {
	sv := p.Serve
	sv.Plans = publishPlans
	sv.Web.Public, sv.Web.Token, sv.Web.Listen = true, "", "127.0.0.1:0"
	sv.Web.SearchURL, sv.Web.NoSearch = p.SearchURL, p.SearchURL == ""
	sv.Web.Timeout = publishTimeout
	ui, closeWeb, err := h.OpenWeb(ctx, db, sv)
	if err != nil {
		return publish.Result{}, err
	}
	defer closeWeb()
	site := publish.Site{Handler: ui, Skip: web.NotPublished, Origin: web.Origin(sv.Web.PublicURL),
		Order: web.PublishOrder, Progress: p.Progress, Pause: clock.Sleep, Only: p.Only, Again: web.RepublishedWithItsIndex}
	if p.Only == nil {
		if site.Seeds, err = web.PublishSeeds(ctx, db.DB, sv.Web.PublicURL); err != nil {
			return publish.Result{}, err
		}
	}
	return publish.Publish(ctx, p.Dir, site)
}

// publishTimeout bounds the build of one page of a publish: the largest
// (every region's videos on the worldwide page) on a loaded host, which a
// reader's bound would cut.
const publishTimeout = 2 * time.Minute

// publishOnLandings publishes r.Publish from p's database at the start
// and each time its data mark moves (web.PublishOnLandings); the function
// returned stops it.
func (h *Host) publishOnLandings(ctx context.Context, p *Pipeline, r Run) (stop func()) {
	if r.Publish == nil {
		return func() {}
	}
	return web.PublishOnLandings(ctx, p.DB.DB, h.clock(), func(ctx context.Context, only []string) error {
		return h.publishLogged(ctx, p, r, only)
	})
}

// publishLogged publishes r.Publish from p's database and says what it
// wrote, or why it could not: the daemon's publish at each landing (only,
// when not nil, the paths a partial one asks), and run --once's after its
// passes.
func (h *Host) publishLogged(ctx context.Context, p *Pipeline, r Run, only []string) error {
	pub := *r.Publish
	pub.Only = only
	pub.Serve.QuotaKey, pub.Serve.Standing = p.QuotaKey, r.Terms.Standing
	pub.Serve.Schedule = Schedule{Timetable: r.Timetable, Regions: r.Regions}
	start := h.now()
	res, err := h.Publish(ctx, p.DB, pub)
	if err != nil {
		if ctx.Err() == nil {
			h.Logger.Warn("publish: the site was not written; the directory keeps what it had", "dir", pub.Dir, ingest.LogErr, err)
		}
		return err
	}
	h.Logger.Info("published", "dir", pub.Dir, "pages", publishedPages(only), "files", res.Files, "bytes", res.Bytes, "written", res.Written,
		"written_bytes", res.WrittenBytes, "removed", res.Removed, "took", h.now().Sub(start).Round(time.Millisecond).String())
	return nil
}

// publishedPages says in the log which pages a publish asked: every one,
// or those the changes named.
func publishedPages(only []string) string {
	if only == nil {
		return "all"
	}
	return fmt.Sprintf("changed (%d)", len(only))
}

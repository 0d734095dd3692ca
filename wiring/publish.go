package wiring

// The readers' site as files: the site serve --public builds, asked in
// the process for every page a reader reaches, written by publish/.

import (
	"context"

	"github.com/ingestworks/ingest/clock"
	"github.com/ingestworks/ingest/publish"
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

// Publish writes the readers' site over db into p.Dir: the site serve
// --public builds, with the search pointed at p.SearchURL, asked in the
// process for every chart, its JSON and feed, the pages they link, the
// sitemap and robots.txt.
func (h *Host) Publish(ctx context.Context, db *Database, p Publish) (publish.Result, error) {
	sv := p.Serve
	sv.Plans, sv.Web = web.PublishPlans, web.Published(sv.Web, p.SearchURL)
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
	publish.Said(ctx, h.Logger, pub.Dir, only, res, err, h.now().Sub(start))
	return err
}

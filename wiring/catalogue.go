package wiring

// The region catalogue: what --regions all selects and what reports name
// each region by. It is read from the upstream (i18nRegions.list, through
// the limiter like every call) at most once a day and kept in the
// database; the built-in copy serves until the first read, and whenever
// the upstream cannot be asked, the catalogue never fails a run.

import (
	"context"
	"errors"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/clock"
	"github.com/ingestworks/ingest/fetch"
	"github.com/ingestworks/ingest/jobs"
	"github.com/ingestworks/ingest/regions"
	"github.com/ingestworks/ingest/report"
)

// CatalogueEvery is how old the stored catalogue may grow before it is
// read again.
const CatalogueEvery = 24 * time.Hour

// Catalogue is the region catalogue of p's database. With a gate, when
// none is stored or it is older than CatalogueEvery, it is read again
// from the upstream first (one call, through gate) and stored; a refusal
// or an error is logged, and what is stored, else the built-in copy,
// serves. A nil gate reads only what is stored.
func (h *Host) Catalogue(ctx context.Context, p *Pipeline, gate ingest.Gate) regions.Catalogue {
	stored, at, err := p.DB.RegionCatalogue().Load(ctx)
	if err != nil {
		h.Logger.Warn("the stored region catalogue could not be read: the built-in copy serves", ingest.LogErr, err)
		return regions.Builtin
	}
	if gate != nil && h.now().Sub(at) >= CatalogueEvery {
		if fresh, ok := h.readCatalogue(ctx, p, gate); ok {
			return fresh
		}
	}
	return catalogueOf(stored)
}

// readCatalogue asks the upstream for the catalogue and stores it.
func (h *Host) readCatalogue(ctx context.Context, p *Pipeline, gate ingest.Gate) (regions.Catalogue, bool) {
	listed, err := p.Source.Regions(ctx, gate)
	if err == nil && len(listed) == 0 {
		err = errors.New(ingest.OpRegionsList + " named no region")
	}
	if err != nil {
		h.Logger.Warn("the region catalogue was not read from the upstream: the stored one, else the built-in copy, serves",
			ingest.LogErr, err)
		return nil, false
	}
	cat := catalogueOf(listed)
	if err := p.DB.RegionCatalogue().Save(ctx, regionsOf(cat), h.now()); err != nil {
		h.Logger.Warn("the region catalogue read from the upstream was not stored", ingest.LogErr, err)
	}
	h.Logger.Info("region catalogue read from the upstream", "regions", len(cat))
	return cat, true
}

// StartTimeout is how long the daemon's start waits on the upstream for
// the region catalogue unless --start-timeout says otherwise: the budget
// of the upstream's clock's free request, which comes first. A healthy
// upstream answers that request and the catalogue's call well within it;
// one that does not is not worth a start that waits for its retries, as
// the stored catalogue (else the built-in copy) serves as well, and the
// read goes on behind.
const StartTimeout = fetch.ClockBudget

// lateRead is the start's read of the upstream's catalogue, going on after
// the start stopped waiting for it: got is what it read, nil when it
// failed; both are set before done closes.
type lateRead struct {
	got  regions.Catalogue
	done chan struct{}
}

// wait returns once the read has ended; at once when there is none.
func (l *lateRead) wait() {
	if l != nil {
		<-l.done
	}
}

// startCatalogue is the region catalogue a daemon's start plans on. When
// the one db stores is a day old, or none is stored, the upstream's is
// read (read), waited for at most bound; past it the stored one serves,
// else the built-in copy, which is said at warn, and the read goes on:
// late is its end, nil when the start did not leave one behind.
func (h *Host) startCatalogue(ctx context.Context, db *Database, read func(context.Context) (regions.Catalogue, bool), bound time.Duration) (regions.Catalogue, *lateRead) {
	stored, at, err := db.RegionCatalogue().Load(ctx)
	if err != nil {
		h.Logger.Warn("the stored region catalogue could not be read: the built-in copy serves", ingest.LogErr, err)
		return regions.Builtin, nil
	}
	if h.now().Sub(at) < CatalogueEvery {
		return catalogueOf(stored), nil
	}
	late := &lateRead{done: make(chan struct{})}
	go func() {
		defer close(late.done)
		if cat, ok := read(ctx); ok {
			late.got = cat
		}
	}()
	wait := clock.NewTimer(bound)
	defer wait.Stop()
	select {
	case <-late.done:
		if late.got != nil {
			return late.got, nil
		}
		return catalogueOf(stored), nil
	case <-wait.C:
	}
	if len(stored) == 0 {
		h.Logger.Warn("the region catalogue was not read from the upstream within --start-timeout: the daemon plans on the copy built in, and goes on reading it behind",
			"catalogue", "built-in", "regions", len(regions.Builtin), "bound", bound)
	} else {
		h.Logger.Warn("the region catalogue was not read from the upstream within --start-timeout: the daemon plans on the one stored, and goes on reading it behind",
			"catalogue", "stored", "read_at", at.UTC().Format(time.RFC3339), "regions", len(stored), "bound", bound)
	}
	return catalogueOf(stored), late
}

// StoredCatalogue is the region catalogue db holds, the built-in copy when
// it holds none or cannot be read; db nil is no database yet.
func StoredCatalogue(ctx context.Context, db *Database) regions.Catalogue {
	if db == nil {
		return regions.Builtin
	}
	stored, _, err := db.RegionCatalogue().Load(ctx)
	if err != nil {
		return regions.Builtin
	}
	return catalogueOf(stored)
}

// keepCatalogue reads the catalogue again while the daemon runs: at once
// unless the start read it (--regions all), then every hour it looks
// whether the stored one has grown older than CatalogueEvery (another
// daemon on the database may have read it), and asks the upstream at most
// once per CatalogueEvery whatever the answer. A region it newly lists
// joins a daemon of --regions all at its next start, which it says. It
// returns when ctx ends or stop is closed, never in the middle of a read.
func (h *Host) keepCatalogue(ctx context.Context, p *Pipeline, r Run, lim jobs.Limiter, stop <-chan struct{}) {
	var asked time.Time
	if r.Regions.All() {
		asked = h.now()
	}
	tick := clock.NewTicker(time.Hour)
	defer tick.Stop()
	for {
		if _, at, err := p.DB.RegionCatalogue().Load(ctx); err == nil && h.now().Sub(at) >= CatalogueEvery && h.now().Sub(asked) >= CatalogueEvery {
			asked = h.now()
			if cat, ok := h.readCatalogue(ctx, p, jobs.Gate(lim, p.QuotaKey, "")); ok && r.Regions.All() {
				h.sayNewRegions(cat, r.Timetable.Regions())
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-stop:
			return
		case <-tick.C:
		}
	}
}

// sayNewRegions logs the regions of cat a daemon of --regions all does
// not run: the upstream listed them after the daemon started.
func (h *Host) sayNewRegions(cat regions.Catalogue, running []string) {
	var added []string
	for _, code := range cat.Codes() {
		if !slices.Contains(running, code) {
			added = append(added, code)
		}
	}
	if len(added) > 0 {
		h.Logger.Info("the region catalogue lists regions this daemon does not run: --regions all takes them at its next start",
			"regions", strings.Join(added, ","))
	}
}

// catalogueOf is a stored or listed catalogue as regions knows one; the
// built-in copy when it is empty.
func catalogueOf(listed []ingest.Region) regions.Catalogue {
	if len(listed) == 0 {
		return regions.Builtin
	}
	out := make([]regions.Region, len(listed))
	for i, r := range listed {
		out[i] = regions.Region{Code: r.Code, Name: r.Name}
	}
	return regions.Sorted(out)
}

// regionsOf is cat as the store keeps it.
func regionsOf(cat regions.Catalogue) []ingest.Region {
	out := make([]ingest.Region, len(cat))
	for i, r := range cat {
		out[i] = ingest.Region{Code: r.Code, Name: r.Name}
	}
	return out
}

// heldCharts makes src's schedule the charts db holds runs of, by name,
// when it holds any: a database that ran only some regions reports those,
// not the default ones.
func heldCharts(ctx context.Context, db *Database, src *report.Sources) error {
	last, err := db.LastRuns(ctx, ingest.Trending)
	if err != nil || len(last) == 0 {
		return err
	}
	src.Timetable = jobs.NamedTimetable(src.Timetable.Every, slices.Sorted(maps.Keys(last)))
	return nil
}

// regionNames names a chart's region ("US", "US/10") as cat does; "" when
// cat does not name it.
func regionNames(cat regions.Catalogue) func(chart string) string {
	return func(chart string) string {
		code, _, _ := strings.Cut(chart, "/")
		if r, ok := cat.Find(code); ok {
			return r.Name
		}
		return ""
	}
}

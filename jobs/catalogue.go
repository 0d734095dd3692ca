package jobs

// The region catalogue: what --regions all selects and what reports name
// each region by. It is read from the upstream (i18nRegions.list, through
// the limiter like every call) at most once a day and kept in the
// database; the built-in copy serves until the first read, and whenever
// the upstream cannot be asked, the catalogue never fails a run.

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/clock"
	"github.com/ingestworks/ingest/regions"
)

// CatalogueEvery is how old the stored catalogue may grow before it is
// read again.
const CatalogueEvery = 24 * time.Hour

// CatalogueStore is where the catalogue is kept, with when it was read
// (store.RegionCatalogue).
type CatalogueStore interface {
	Load(ctx context.Context) ([]ingest.Region, time.Time, error)
	Save(ctx context.Context, regions []ingest.Region, at time.Time) error
}

// Catalogue keeps the region catalogue in Store, read from the upstream
// by List (fetch.Client.Regions) when it is a day old.
type Catalogue struct {
	Store  CatalogueStore
	List   func(ctx context.Context, gate ingest.Gate) ([]ingest.Region, error)
	Clock  ingest.Clock
	Logger *slog.Logger
	// Limiter and Costs block the pools the upstream says spent when the
	// read meets its exhausted quota, as a pass's call does; a nil
	// Limiter or Costs blocks nothing (a read with no limiter behind its
	// gate).
	Limiter Limiter
	Costs   *ingest.Costs
}

// Current is the region catalogue of the store. With a gate, when none is
// stored or it is older than CatalogueEvery, it is read again from the
// upstream first (one call, through gate) and stored; a refusal or an
// error is logged, and what is stored, else the built-in copy, serves. A
// nil gate reads only what is stored.
func (c Catalogue) Current(ctx context.Context, gate ingest.Gate) regions.Catalogue {
	stored, at, err := c.Store.Load(ctx)
	if err != nil {
		c.Logger.Warn("the stored region catalogue could not be read: the built-in copy serves", ingest.LogErr, err)
		return regions.Builtin
	}
	if gate != nil && c.Clock.Now().Sub(at) >= CatalogueEvery {
		if fresh, ok := c.Read(ctx, gate); ok {
			return fresh
		}
	}
	return CatalogueOf(stored)
}

// Read asks the upstream for the catalogue through gate and stores it.
func (c Catalogue) Read(ctx context.Context, gate ingest.Gate) (regions.Catalogue, bool) {
	listed, err := c.List(ctx, gate)
	if err == nil && len(listed) == 0 {
		err = errors.New(ingest.OpRegionsList + " named no region")
	}
	if err != nil {
		c.Logger.Warn("the region catalogue was not read from the upstream: the stored one, else the built-in copy, serves",
			ingest.LogErr, err)
		c.blockSpent(ctx, err)
		return nil, false
	}
	cat := CatalogueOf(listed)
	if err := c.Store.Save(ctx, regionsOf(cat), c.Clock.Now()); err != nil {
		c.Logger.Warn("the region catalogue read from the upstream was not stored", ingest.LogErr, err)
	}
	c.Logger.Info("region catalogue read from the upstream", "regions", len(cat))
	return cat, true
}

// LateRead is the start's read of the upstream's catalogue, going on after
// the start stopped waiting for it: Got is what it read, nil when it
// failed; it is set before Wait returns.
type LateRead struct {
	Got  regions.Catalogue
	done chan struct{}
}

// Wait returns once the read has ended; at once when there is none.
func (l *LateRead) Wait() {
	if l != nil {
		<-l.done
	}
}

// Start is the region catalogue a daemon's start plans on. When the one
// the store keeps is a day old, or none is stored, the upstream's is read
// (read), waited for at most bound; past it the stored one serves, else
// the built-in copy, which is said at warn, and the read goes on: late is
// its end, nil when the start did not leave one behind.
func (c Catalogue) Start(ctx context.Context, read func(context.Context) (regions.Catalogue, bool), bound time.Duration) (regions.Catalogue, *LateRead) {
	stored, at, err := c.Store.Load(ctx)
	if err != nil {
		c.Logger.Warn("the stored region catalogue could not be read: the built-in copy serves", ingest.LogErr, err)
		return regions.Builtin, nil
	}
	if c.Clock.Now().Sub(at) < CatalogueEvery {
		return CatalogueOf(stored), nil
	}
	late := &LateRead{done: make(chan struct{})}
	go func() {
		defer close(late.done)
		if cat, ok := read(ctx); ok {
			late.Got = cat
		}
	}()
	wait := clock.NewTimer(bound)
	defer wait.Stop()
	select {
	case <-late.done:
		if late.Got != nil {
			return late.Got, nil
		}
		return CatalogueOf(stored), nil
	case <-wait.C:
	}
	if len(stored) == 0 {
		c.Logger.Warn("the region catalogue was not read from the upstream within --start-timeout: the daemon plans on the copy built in, and goes on reading it behind",
			"catalogue", "built-in", "regions", len(regions.Builtin), "bound", bound)
	} else {
		c.Logger.Warn("the region catalogue was not read from the upstream within --start-timeout: the daemon plans on the one stored, and goes on reading it behind",
			"catalogue", "stored", "read_at", at.UTC().Format(time.RFC3339), "regions", len(stored), "bound", bound)
	}
	return CatalogueOf(stored), late
}

// WatchLate watches the catalogue read late: once it is read and selects
// other charts than charts (sel read on it), moved closes, and drain with
// it; drain closes at a signal too, and then moved never does. It watches
// until ended closes.
func WatchLate(late *LateRead, sel regions.Selection, charts []regions.Chart, signals, ended <-chan struct{}) (drain, moved <-chan struct{}) {
	d, m := make(chan struct{}), make(chan struct{})
	go func() {
		select {
		case <-signals:
			close(d)
			return
		case <-ended:
			return
		case <-late.done:
		}
		if now, err := sel.Of(late.Got); late.Got != nil && err == nil && !slices.Equal(now, charts) {
			close(m)
			close(d)
			return
		}
		select {
		case <-signals:
			close(d)
		case <-ended:
		}
	}()
	return d, m
}

// Planned is the region catalogue a plan of a daemon's start runs on:
// read, when a plan before read it late; the upstream's now for run --once
// (Current); else the start's (Start), waited for at most bound, with late
// its read left behind. end stops that read and awaits it: a plan that
// ends before its daemon runs does not wait on a read left behind, and a
// daemon that runs awaits it.
func (c Catalogue) Planned(ctx context.Context, read regions.Catalogue, once bool, gate ingest.Gate, bound time.Duration) (cat regions.Catalogue, late *LateRead, end func()) {
	switch {
	case read != nil:
		return read, nil, func() {}
	case once:
		return c.Current(ctx, gate), nil, func() {}
	}
	readCtx, stopRead := context.WithCancel(ctx)
	cat, late = c.Start(readCtx, func(ctx context.Context) (regions.Catalogue, bool) { return c.Read(ctx, gate) }, bound)
	return cat, late, func() { stopRead(); late.Wait() }
}

// CatalogueMoved ends a daemon's plan when the region catalogue its start
// read late, Got, selects other charts than it planned on (--regions
// all): Replan plans again on it.
type CatalogueMoved struct{ Got regions.Catalogue }

func (*CatalogueMoved) Error() string { return "the region catalogue moved" }

// Moved is how a daemon's plan that ended with err ends: a
// *CatalogueMoved when it ended cleanly because the read late moved its
// charts (moved, from WatchLate, closed), else err; a nil l has moved
// nothing.
func (l *LateRead) Moved(err error, moved <-chan struct{}) error {
	if l == nil || err != nil {
		return err
	}
	select {
	case <-moved:
		return &CatalogueMoved{Got: l.Got}
	default:
		return nil
	}
}

// Replan runs plan, first on no catalogue read (its start reads one),
// then again on each catalogue read late that moved its charts, until a
// plan ends otherwise; the catalogue is planned on as read, whether or not
// it could be stored.
func Replan(log *slog.Logger, plan func(read regions.Catalogue) error) error {
	var read regions.Catalogue
	for {
		err := plan(read)
		var moved *CatalogueMoved
		if !errors.As(err, &moved) {
			return err
		}
		log.Info("the region catalogue read from the upstream selects other charts than the daemon planned on: it plans and starts its passes again on it",
			"regions", len(moved.Got))
		read = moved.Got
	}
}

// StoredCatalogue is the region catalogue s holds, the built-in copy when
// it holds none or cannot be read; s nil is no database yet.
func StoredCatalogue(ctx context.Context, s CatalogueStore) regions.Catalogue {
	if s == nil {
		return regions.Builtin
	}
	stored, _, err := s.Load(ctx)
	if err != nil {
		return regions.Builtin
	}
	return CatalogueOf(stored)
}

// Keep reads the catalogue again while the daemon runs: at once unless
// the start read it (all, --regions all), then every hour it looks
// whether the stored one has grown older than CatalogueEvery (another
// daemon on the database may have read it), and asks the upstream through
// gate at most once per CatalogueEvery whatever the answer. A region it
// newly lists, not among running, joins a daemon of --regions all at its
// next start, which it says. It returns when ctx ends or stop is closed,
// never in the middle of a read.
func (c Catalogue) Keep(ctx context.Context, all bool, running []string, gate ingest.Gate, stop <-chan struct{}) {
	var asked time.Time
	if all {
		asked = c.Clock.Now()
	}
	tick := clock.NewTicker(time.Hour)
	defer tick.Stop()
	for {
		if _, at, err := c.Store.Load(ctx); err == nil && c.Clock.Now().Sub(at) >= CatalogueEvery && c.Clock.Now().Sub(asked) >= CatalogueEvery {
			asked = c.Clock.Now()
			if cat, ok := c.Read(ctx, gate); ok && all {
				c.sayNewRegions(cat, running)
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
func (c Catalogue) sayNewRegions(cat regions.Catalogue, running []string) {
	var added []string
	for _, code := range cat.Codes() {
		if !slices.Contains(running, code) {
			added = append(added, code)
		}
	}
	if len(added) > 0 {
		c.Logger.Info("the region catalogue lists regions this daemon does not run: --regions all takes them at its next start",
			"regions", strings.Join(added, ","))
	}
}

// CatalogueOf is a stored or listed catalogue as regions knows one; the
// built-in copy when it is empty.
func CatalogueOf(listed []ingest.Region) regions.Catalogue {
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

// RegionNames names a chart's region ("US", "US/10") as cat does; "" when
// cat does not name it.
func RegionNames(cat regions.Catalogue) func(chart string) string {
	return func(chart string) string {
		code, _, _ := strings.Cut(chart, "/")
		if r, ok := cat.Find(code); ok {
			return r.Name
		}
		return ""
	}
}

// blockSpent blocks the pools the upstream said spent, when err says so
// (BlockSpent), and says which and until when.
func (c Catalogue) blockSpent(ctx context.Context, err error) {
	var exhausted *ingest.QuotaExhaustedError
	if c.Limiter == nil || c.Costs == nil || !errors.As(err, &exhausted) {
		return
	}
	until, pools, err := BlockSpent(context.WithoutCancel(ctx), c.Limiter, c.Costs, exhausted)
	if err != nil {
		c.Logger.Error("the upstream said its quota is spent, and the block of its pools was not written: workers may call it again before its reset",
			"pools", strings.Join(pools, ","), ingest.LogErr, err)
		return
	}
	c.Logger.Warn(blockedMessage(pools, until), ingest.LogOp, exhausted.Op, "retry_at", until.UTC())
}

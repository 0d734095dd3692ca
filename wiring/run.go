package wiring

// What `ingest run` does once its flags are checked and its pipeline is
// open: build the chart passes, tracking, pruning and the refresh of kept
// videos, serve --listen, and run them once or as a daemon until a signal.

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/url"
	"time"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/dbcopy"
	"github.com/ingestworks/ingest/fetch"
	"github.com/ingestworks/ingest/jobs"
	"github.com/ingestworks/ingest/metrics"
	"github.com/ingestworks/ingest/ratelimit"
	"github.com/ingestworks/ingest/regions"
	"github.com/ingestworks/ingest/report"
	"github.com/ingestworks/ingest/retention"
	"github.com/ingestworks/ingest/store"
	"github.com/ingestworks/ingest/util/sdnotify"
	"github.com/ingestworks/ingest/web"
	"github.com/ingestworks/ingest/web/listener"
)

// Run is a run as its checked flags give it.
type Run struct {
	// Timetable is the schedule of charts: --regions (each region with
	// its tier and depth), --categories, --every and --max-stale.
	Timetable jobs.Timetable
	Once      bool
	// Pace puts the daemon's entries under a pacer (--pace); PacedOnce is
	// --once with --pace given: only the charts the plan says are due run.
	Pace, PacedOnce bool
	// Record keeps the timetable in the database as the schedule every
	// view of the plan reads: the daemon always records it; run --once
	// when cron's period is known (--every given).
	Record bool
	// Track is how far back tracking follows the charts' videos; zero
	// tracks nothing.
	Track, TrackEvery time.Duration
	Keep              time.Duration // statistics kept by the prune
	Terms             Terms
	Build             metrics.Build
	// Listen, when set, is run --listen's listener: its address, the
	// access token and what the dashboard shows; Plans are its API's
	// clients' plans.
	Listen *web.Config
	// Purge are the caches in front of Listen told of each landing
	// (--purge-url).
	Purge []*url.URL
	// Listener is --listen's, opened and served before the database
	// (OpenListener), so that a port in use is refused before anything is
	// created and /healthz answers however slow the start; nil: opened
	// once the site is built.
	Listener *Listener
	Plans    *ratelimit.APIPlans
	// Publish, when set, is --publish: the readers' site written into its
	// directory at the start and after each landing (publish.go).
	Publish *Publish
	// Regions is --regions as given: when it names all, the timetable's
	// charts are selected again from the region catalogue, read first from
	// the upstream when it is a day old (jobs/catalogue.go).
	Regions regions.Selection
	// StartTimeout is how long the daemon's start waits on the upstream
	// for the region catalogue (--start-timeout); zero is StartTimeout.
	StartTimeout time.Duration
	// TrackBudget is the stats units a day tracking plans on
	// (--track-budget); zero is jobs.TrackBudget of the costs.
	TrackBudget int64
	// Plan prints the day's plan at start (the daemon, and run --once when
	// --every says cron's period), and records it with the schedule;
	// Strict refuses a plan that does not fit the pools.
	Plan, Strict bool

	// Backups, when set, is the daemon's schedule of backups of its
	// SQLite database (--backup-to, --backup-every, --backup-keep).
	Backups *dbcopy.Backups

	// Opened, when set, is given the database once the pipeline opened
	// it: the simulation fills that database's disk.
	Opened func(*store.DB)

	// planned is the day's plan Prepare made, for the record and the
	// site's views.
	planned *report.DayPlan
}

// Run is `ingest run` once its flags are checked, for the binary and the
// simulation alike: the database opened once when there is one, --regions
// read and the day's plan made on it (Prepare), the listener opened unless
// r brings one, the pipeline opened on that database (or creating it) for
// apiKey spending on quotaKey, the standing's gate, then the runs. Each
// step refuses a bad setting before the next opens or creates anything.
func (h *Host) Run(ctx context.Context, apiKey, quotaKey string, r Run) error {
	// The one open of the database, when there is one: --regions and
	// the plan read it before the pipeline takes it for the run.
	var db *Database
	if h.DBExists() {
		var err error
		if db, err = h.OpenStore(ctx); err != nil {
			return err
		}
	}
	if err := h.Prepare(ctx, db, &r); err != nil {
		if db != nil {
			db.Close()
		}
		return err
	}
	if r.Listen != nil && r.Listener == nil {
		// A port in use is exit 2 before the database is created; /healthz
		// answers from here on, however long the start waits on the upstream.
		var err error
		if r.Listener, err = h.OpenListener(ctx, *r.Listen, r.Build); err != nil {
			if db != nil {
				db.Close()
			}
			return err
		}
		defer r.Listener.Close()
	}
	p, err := h.openPipeline(ctx, apiKey, quotaKey, db)
	if err != nil {
		return err
	}
	defer p.Close()
	if r.Opened != nil {
		r.Opened(p.DB.DB)
	}
	if err := r.Terms.Gate(ctx, p.DB); err != nil { // a database holding more than the standing allows
		return err
	}
	return h.runOn(ctx, p, r)
}

// runOn runs r over p: every chart once and exit (r.Once), or as a daemon
// until a signal. SIGINT or SIGTERM starts no new run and lets the page in
// flight be stored; a second one stops at once.
func (h *Host) runOn(ctx context.Context, p *Pipeline, r Run) (err error) {
	if !r.Once {
		release, cerr := store.ClaimDaemon(h.DSN) // another daemon on the file: a ConfigError
		if cerr != nil {
			return cerr
		}
		defer release()
		// The daemon's last line, after its runs in flight and its
		// listener have ended: a supervisor's log then says it stopped
		// rather than died. An error is the command's last line instead.
		defer func(started time.Time) {
			if err == nil {
				h.Logger.Info("daemon stopped", "uptime", h.now().Sub(started).Round(time.Second))
			}
		}(h.now())
	}
	if r.Listener != nil {
		defer r.Listener.Close() // before the daemon's last line, whatever ends the run
	}
	release, err := h.Working(ctx, p)
	if err != nil {
		return err
	}
	defer release()
	ctx, stopOutdated := context.WithCancelCause(ctx)
	defer stopOutdated(nil)
	ctx, drain, stop := h.signals(ctx)
	defer stop()
	// From the first signal no call starts, a retry neither, whoever makes it.
	upstream := jobs.Stopping(p.Limiter, drain)
	// The catalogue's call is the run's: its units count in run --once's summary.
	gate, spent := jobs.Counted(upstream, p.QuotaKey, "")
	s := started{drain: drain, upstream: upstream, gate: gate, spent: spent, stopOutdated: stopOutdated}
	return jobs.Replan(h.Logger, func(read regions.Catalogue) error {
		s.read = read
		return h.runPlanned(ctx, p, r, s)
	})
}

// started is what a run's start holds for each plan it runs: the signals'
// drain, the upstream's limiter that stops at it, and the gate the region
// catalogue is read through with what it spent.
type started struct {
	drain        <-chan struct{}
	upstream     jobs.Limiter
	gate         ingest.Gate
	spent        map[string]int64
	stopOutdated context.CancelCauseFunc
	// read, when set, is the catalogue a plan before read late: the next
	// plans on it without asking the upstream again.
	read regions.Catalogue
}

// runPlanned reads r's charts from the region catalogue, makes and says
// the day's plan when they differ from Prepare's, and runs them: once, or
// as the daemon until a signal, or until a catalogue its start read late
// selects other charts (jobs.CatalogueMoved).
func (h *Host) runPlanned(ctx context.Context, p *Pipeline, r Run, s started) (err error) {
	m := metrics.New(r.Build, h.clock())
	last, err := p.DB.LastRuns(ctx, ingest.Trending)
	if err != nil {
		return fmt.Errorf("read last runs: %w", err)
	}
	m.Seed(last)
	var late *jobs.LateRead
	if r.Regions.All() {
		r.Listener.Step(stepCatalogue)
		cat, read, end := h.catalogue(p).Planned(ctx, s.read, r.Once, s.gate, cmp.Or(r.StartTimeout, StartTimeout))
		late = read
		defer end()
		if r.Timetable.Charts, err = r.Regions.Of(cat); err != nil {
			return err
		}
	}
	if r.Plan && r.Regions.All() { // Prepare planned the stored catalogue's charts; the one read now may select others
		r.planned, err = r.planned.For(r.Timetable.Charts, func() (*report.DayPlan, error) {
			r.Listener.Step(stepPlan)
			return h.dayPlan(ctx, p.DB, r)
		})
		r.planned.Say(h.Logger)
		if err != nil {
			return err
		}
	}
	// A catalogue read late ends this plan's passes as a signal would,
	// the page in flight stored, for the next plan to run on it.
	drain, moved := s.drain, (<-chan struct{})(nil)
	if late != nil {
		ended := make(chan struct{})
		defer close(ended)
		drain, moved = jobs.WatchLate(late, r.Regions, r.Timetable.Charts, s.drain, ended)
	}
	ages := metrics.NewAges(last)
	leases, err := h.databaseLeases(ctx, p.Limiter, p.DB)
	if err != nil {
		return err
	}
	runner := &jobs.Runner{Locker: leases, Logger: h.Logger, Clock: h.clock(), Observe: ages.Keep(stopWhenOutdated(m.Observe, s.stopOutdated), h.now),
		Drain: drain, LastStart: p.DB.LastStart, Record: p.DB, Backoff: m.Backoff, Kept: p.DB}
	lim := jobs.Stopping(m.Metered(p.Limiter), drain) // a stop is not the limiter's error
	runner.Passes = r.Timetable.Passes(jobs.Pass{QuotaKey: p.QuotaKey, Costs: h.Costs,
		Limiter: lim, Source: p.Source, Sink: p.DB, Categories: p.DB, Drain: drain, Clock: h.clock()}, h.Logger)
	ros := jobs.Roster{Runner: runner, Every: r.Timetable.Every, TrackEvery: r.TrackEvery,
		Prune: r.Terms.PruneJob(p.DB, r.Keep, drain), Refresh: h.refreshJob(p, lim, drain, r.Timetable.RefreshEvery(!r.Once || r.Record))}
	if r.Track > 0 {
		ros.Track = &jobs.Track{QuotaKey: p.QuotaKey, Costs: h.Costs, Limiter: lim, Source: p.Source, Store: p.DB,
			Logger: h.Logger.With(ingest.LogOp, ingest.OpBatchGetStats), For: r.Track, Drain: drain,
			Cadence: r.Timetable.Cadence(r.TrackEvery, r.TrackBudget, h.Costs), Clock: h.clock()}
	}
	if r.Once {
		var pacer jobs.Pacer
		if r.PacedOnce {
			pc, err := h.NewPacer(p, &ros, r.Timetable.MaxStale, true) // cron runs it, not the slots
			if err != nil {
				return err
			}
			pacer = pc
		}
		shutdown, err := h.listenIfAsked(ctx, r, m, p)
		if err != nil {
			return err
		}
		defer shutdown()
		if err := store.Outdated(ctx, h.once(ctx, p, r, &jobs.Daemon{Roster: ros, Pacer: pacer, Spent: s.spent})); err != nil || r.Publish == nil {
			return err
		}
		return h.publishLogged(ctx, p, r, nil)
	}
	pacer, err := h.watchPace(r, p, &ros, m, ages)
	if err != nil {
		return err
	}
	var backed *metrics.Backups
	if r.Backups != nil {
		backed = metrics.NewBackups(h.clock(), r.Backups.Every, p.DB.BackedUp)
		for _, c := range backed.Collectors() {
			m.Register(c)
		}
	}
	// The site is served once /metrics holds every series the daemon
	// serves: a scrape that reaches it never misses the charts' cadences.
	r.Listener.Step(stepSite)
	shutdown, err := h.listenIfAsked(ctx, r, m, p)
	if err != nil {
		return err
	}
	defer func() {
		var again *jobs.CatalogueMoved
		if r.Listener != nil && !errors.As(err, &again) {
			r.Listener.Close() // the port first, then the site behind it
		}
		shutdown()
	}()
	defer h.publishOnLandings(ctx, p, r)()
	d := &jobs.Daemon{Roster: ros, LastStart: store.LastStarts(last), Pacer: pacer, Spent: s.spent}
	err = late.Moved(store.Outdated(ctx, h.daemon(ctx, p, r, d, s.upstream, backed, late)), moved)
	if again := (*jobs.CatalogueMoved)(nil); errors.As(err, &again) {
		r.Listener.Again(stepCatalogue) // starting again until the next plan's site serves
	}
	return err
}

// refreshJob fetches again, by id, the videos kept rows show before their
// text is too old (jobs.Refresh), a share of them a pass run every every.
func (h *Host) refreshJob(p *Pipeline, lim jobs.Limiter, drain <-chan struct{}, every time.Duration) *jobs.Refresh {
	return &jobs.Refresh{QuotaKey: p.QuotaKey, Costs: h.Costs, Limiter: lim, Source: p.Source, Store: retention.GoneStore{DB: p.DB.DB},
		Logger: h.Logger.With(ingest.LogOp, ingest.OpVideosList), Drain: drain, Every: every, Clock: h.clock()}
}

var _ jobs.TrackStore = (*store.DB)(nil)

// stopWhenOutdated is observe, then a stop of the runs when a run ended
// refused for a newer schema (store.StopWhenOutdated).
func stopWhenOutdated(observe func(jobs.Entry, jobs.Ended, time.Duration, time.Time), stop context.CancelCauseFunc) func(jobs.Entry, jobs.Ended, time.Duration, time.Time) {
	return func(e jobs.Entry, end jobs.Ended, took time.Duration, slot time.Time) {
		observe(e, end, took, slot)
		store.StopWhenOutdated(end.Err, stop)
	}
}

// once runs every chart's pass now (only those due, paced), then tracking
// and pruning when they are asked for.
func (h *Host) once(ctx context.Context, p *Pipeline, r Run, d *jobs.Daemon) error {
	if r.Record {
		if err := h.record(ctx, p, r.Timetable, r.planned.Lines()); err != nil {
			return err
		}
	}
	results, err := d.Once(ctx)
	if err != nil {
		return err
	}
	return jobs.OnceError(results, len(d.Runner.Passes), h.EndpointName())
}

// daemon records the schedule, then runs the daemon until a signal stops
// it (or the catalogue read late moves its charts: runPlanned), with the
// backups beside it when r asks for them.
func (h *Host) daemon(ctx context.Context, p *Pipeline, r Run, d *jobs.Daemon, upstream jobs.Limiter, backed *metrics.Backups, late *jobs.LateRead) error {
	if err := h.record(ctx, p, r.Timetable, r.planned.Lines()); err != nil {
		return err
	}
	// The start's read of the catalogue left behind is stored before the
	// daemon says it stopped and closes the database, as the keeper's is.
	defer late.Wait()
	// The catalogue's keeper ends with the daemon: a read of it in flight
	// when a signal comes is stored before the daemon says it stopped
	// and closes the database.
	stopKeeper := make(chan struct{})
	kept := make(chan struct{})
	go func() {
		defer close(kept)
		h.catalogue(p).Keep(ctx, r.Regions.All(), r.Timetable.Regions(), jobs.Gate(upstream, p.QuotaKey, ""), stopKeeper)
	}()
	defer func() { close(stopKeeper); <-kept }()
	if r.Backups != nil && r.Backups.Dir != "" {
		// A backup in flight when a signal comes is finished (or its
		// part removed) before the daemon says it stopped and closes
		// the database.
		stopBackups, backedUp := make(chan struct{}), make(chan struct{})
		go func() {
			defer close(backedUp)
			h.keepBackups(ctx, p.DB, *r.Backups, backed, stopBackups)
		}()
		defer func() { close(stopBackups); <-backedUp }()
	}
	h.Logger.Info("daemon started", "regions", len(r.Timetable.Charts), "charts", len(d.Runner.Passes), "every", r.Timetable.Every,
		"backend", p.Limiter.Backend())
	// Under systemd's Type=notify, `systemctl start` returns now, its
	// listener serving; a unit ordered after it starts on a daemon that
	// answers.
	sdnotify.Tell(h.Logger)
	return d.Run(ctx)
}

// watchPace puts the daemon's charts and tracking under a pacer (run
// --pace, the default) and serves each chart's age and the plan on
// /metrics. Each entry keeps its staggered slots (--every, --track-every);
// at each slot the pacer decides whether the entry runs there, so that a
// schedule that fits the pools runs exactly as without it, and one that
// does not is spread at a rate the pools hold forever instead of spending
// them by morning. Pruning spends no quota and keeps its own slots. The
// pacer is nil when nothing paces; ages are the charts' as the runner's
// Observe keeps them.
func (h *Host) watchPace(r Run, p *Pipeline, ros *jobs.Roster, m *metrics.Metrics, ages *metrics.Ages) (jobs.Pacer, error) {
	col := &metrics.Pace{Ages: ages, Floors: ros.Floors(), Clock: h.clock()}
	var pacer jobs.Pacer
	if r.Pace {
		pc, err := h.NewPacer(p, ros, r.Timetable.MaxStale, false)
		if err != nil {
			return nil, err
		}
		pacer, col.Status = pc, pc.Status
		h.Logger.Info("pacing: each chart's and tracking's cadence follows what the pools hold over their window and day, never faster than --every and --track-every",
			"every", r.Timetable.Every)
	}
	m.Register(col)
	return pacer, nil
}

// listenIfAsked starts the listener when run --listen asks for one; its
// shutdown does nothing otherwise.
func (h *Host) listenIfAsked(ctx context.Context, r Run, m *metrics.Metrics, p *Pipeline) (func(), error) {
	if r.Listen == nil {
		return func() {}, nil
	}
	return h.listen(ctx, r, m, p)
}

// listen starts the listener of run --listen: the site serve serves
// (OpenSite), its /metrics the daemon's, /readyz also asking that the
// database takes a write and that no region has failed
// metrics.FailingAfter passes in a row.
func (h *Host) listen(ctx context.Context, r Run, m *metrics.Metrics, p *Pipeline) (func(), error) {
	cfg := *r.Listen
	ln, err := r.Listener, error(nil)
	if ln == nil {
		if ln, err = h.OpenListener(ctx, cfg, r.Build); err != nil {
			return nil, err
		}
	}
	src := report.Sources{DB: p.DB, Limiter: p.Limiter, Costs: h.Costs, QuotaKey: p.QuotaKey, Timetable: r.Timetable,
		Plan: r.planned.Lines(), Standing: r.Terms.Standing, Held: HeldIn(p.DB)}
	src.Names = jobs.RegionNames(jobs.StoredCatalogue(ctx, catalogueStore(p.DB))) // as the daemon's start left it
	m.WatchClock(p.Upstream.Skew)
	ui, closeSite, err := h.OpenSite(ctx, p.DB, Site{Report: src, Plans: r.Plans, Web: cfg, Series: m.Site(), Scrape: m.Handler(p.Limiter), Purge: r.Purge,
		Ready: web.WriterReady(p.Limiter, listener.Check{Name: "database", Passed: "writable", Probe: p.DB.Writable},
			listener.Check{Name: "regions", Passed: "none failing repeatedly", Probe: m.NoneFailing},
			listener.Check{Name: "clock", Passed: "decisions are taken: the limiter's clock agrees with the upstream's", Probe: p.Upstream.Refusing})})
	if err != nil {
		ln.Close()
		return nil, err
	}
	ln.Serve(ui)
	ui.SayServing(h.Logger, ln.url, cfg.Listen)
	if ln == r.Listener {
		return closeSite, nil // the run closes its listener: a plan that moves keeps it (runPlanned)
	}
	return func() { ln.Close(); closeSite() }, nil
}

// StartTimeout is how long the daemon's start waits on the upstream for
// the region catalogue unless --start-timeout says otherwise: the budget
// of the upstream's clock's free request, which comes first. A healthy
// upstream answers that request and the catalogue's call well within it;
// one that does not is not worth a start that waits for its retries, as
// the stored catalogue (else the built-in copy) serves as well, and the
// read goes on behind.
const StartTimeout = fetch.ClockBudget

// catalogue is the region catalogue kept in p's database, read from p's
// upstream.
func (h *Host) catalogue(p *Pipeline) jobs.Catalogue {
	return jobs.Catalogue{Store: p.DB.RegionCatalogue(), List: p.Source.Regions, Clock: h.clock(), Logger: h.Logger,
		Limiter: p.Limiter, Costs: h.Costs}
}

// catalogueStore is where db keeps the region catalogue; nil when db is.
func catalogueStore(db *Database) jobs.CatalogueStore {
	if db == nil {
		return nil
	}
	return db.RegionCatalogue()
}

package wiring

// The one site: the API and the pages every listener serves, built the
// same way for `serve` and `run --listen` (the same routes, guards, meter,
// token rules, throttle, kept answers and /metrics rules), whatever the
// command around it.

import (
	"context"
	"net/http"
	"net/url"
	"time"

	"github.com/ingestworks/ingest/clients"
	"github.com/ingestworks/ingest/jobs"
	"github.com/ingestworks/ingest/ledger"
	"github.com/ingestworks/ingest/metrics"
	"github.com/ingestworks/ingest/purge"
	"github.com/ingestworks/ingest/ratelimit"
	"github.com/ingestworks/ingest/regions"
	"github.com/ingestworks/ingest/report"
	"github.com/ingestworks/ingest/web"
	"github.com/ingestworks/ingest/web/listener"
	"github.com/ingestworks/ingest/web/signin"
	"github.com/ingestworks/ingest/web/throttle"
)

// Site is what the site is built from, all of it required: the report's
// sources (the limiter read, the costs, the schedule, the quota key, the
// standing), the API's plans, the listener, what /readyz checks of the
// command and where /metrics counts the site.
type Site struct {
	Report report.Sources
	Plans  *ratelimit.APIPlans
	// Web is the listener: its address, whether it is public, its access
	// token, the trusted proxies and what the pages show.
	Web web.Config
	// Ready are the checks of /readyz, per role: web.WriterReady for a
	// process that spends the quota, web.ReadersReady for one that serves
	// readers.
	Ready []listener.Check
	// Series count the site's requests, failed sign-ins and kept answers,
	// in the registry Scrape serves on /metrics.
	Series *metrics.API
	Scrape http.Handler
	// Purge are the caches in front, told what each landing changed
	// (--purge-url); none tells no one.
	Purge []*url.URL
}

// OpenSite builds the site over db: its report read through the kept
// ledger reads, its API's clients metered by the API's limiter; close
// releases that limiter (not db, nor the report's limiter).
func (h *Host) OpenSite(ctx context.Context, db *Database, s Site) (ui *web.Server, closeFn func(), err error) {
	al, closeFn, err := h.APILimiter(db)
	if err != nil {
		return nil, nil, err
	}
	h.Logger.Debug("api: clients are metered", "limiter", al.Backend())
	throttle.Warm(ctx, al, h.Logger)
	cfg := s.Web
	cfg.DB, cfg.QuotaKey, cfg.Logger, cfg.Derived = db.DB, s.Report.QuotaKey, h.Logger, s.Report.Standing.Derived
	cfg.Usage = db.Ledger.FollowDays(s.Report.QuotaKey) // today's units on every request: what changed
	if !followLedger {
		cfg.Usage = db.Ledger
	}
	if cfg.Regions == nil {
		cfg.Regions = jobs.StoredCatalogue(ctx, catalogueStore(db)) // names as the start found them
	}
	cfg.Meter = throttle.NewMeter(s.Plans, al, clients.New(db), s.Series.Observe)
	if !db.ReadOnly() { // else each process keeps its own, as it must
		cfg.Sessions = clients.NewSessions(db, signin.MaxSessions)
	}
	cfg.AuthFailed = s.Series.AuthFailed
	cfg.Clock = h.clock()
	if s.Plans != nil {
		s.Report.Floors = s.Plans.Floors()
	}
	kept := report.Kept(s.Report, ledgerOf(db), followLedger, h.clock())
	cfg.Report = func(ctx context.Context) (*report.Report, error) {
		return BuildReport(ctx, readAt(kept, cfg.Clock.Now()))
	}
	cfg.Routes = append(cfg.Routes, web.SiteRoutes(s.Ready, s.Scrape, cfg.Report)...)
	throttle.WarnUnusableTokens(ctx, h.Logger, clients.New(db), s.Plans)
	var sender *purge.Sender
	if len(s.Purge) > 0 {
		sender = purge.New(s.Purge, h.Logger)
		cfg.Purge = sender
		s.Series.Register(metrics.Purges(func() (int64, int64, int64, int64) {
			f := sender.Figures()
			return f.Sent, f.Retried, f.Failed, f.Overflowed
		})...)
	}
	if ui, err = web.New(cfg); err != nil {
		if sender != nil {
			sender.Close()
		}
		closeFn()
		return nil, nil, err
	}
	s.Series.Register(metrics.Kept(ui.Kept)...)
	s.Series.Register(metrics.KeptBuilds(ui.Builds)...)
	s.Series.Register(metrics.Budget(func() (int64, int64, int, int, int) {
		f := ui.Budget()
		return f.Admitted, f.Refused, f.Running, f.Waiting, f.Slots
	})...)
	closeLimiter := closeFn
	return ui, func() {
		ui.Close()
		if sender != nil {
			sender.Close() // after the watcher that sends to it stopped
		}
		closeLimiter()
	}, nil
}

// readAt is src as a report read at now, the site's clock.
func readAt(src report.Sources, now time.Time) report.Sources {
	src.Now = now
	return src
}

// BuildReport builds the report of src, its regions named as the built-in
// catalogue names them unless src names them.
func BuildReport(ctx context.Context, src report.Sources) (*report.Report, error) {
	if src.Names == nil {
		src.Names = jobs.RegionNames(regions.Builtin)
	}
	if src.NewPacer == nil {
		src.NewPacer = newPacer
	}
	return report.Build(ctx, src)
}

// followLedger is off only for the benchmark's baseline: the window's
// calls and today's units read whole after each change (report.Kept).
var followLedger = true

// ledgerOf is db's ledger, nil when there is no database.
func ledgerOf(db *Database) *ledger.Ledger {
	if db == nil {
		return nil
	}
	return db.Ledger
}

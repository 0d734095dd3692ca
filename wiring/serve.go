package wiring

// What `ingest report` and `ingest serve` read, and serve's API and
// dashboard over it: the daemon's schedule, the limiter read without
// spending, and the API's own limiter metering the clients.

import (
	"context"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"syscall"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/jobs"
	"github.com/ingestworks/ingest/metrics"
	"github.com/ingestworks/ingest/ratelimit"
	"github.com/ingestworks/ingest/report"
	"github.com/ingestworks/ingest/web"
	"github.com/ingestworks/ingest/web/listener"
)

// Schedule is what the report's next runs and plan follow
// (report.FlagsSchedule).
type Schedule = report.FlagsSchedule

// Follow sets src's timetable by sch over db (nil: none yet) and the
// catalogue it keeps (report.FlagsSchedule.Follow).
func Follow(ctx context.Context, sch Schedule, db *Database, src *report.Sources) error {
	var reads report.FollowReads
	if db != nil {
		reads = db
	}
	return sch.Follow(ctx, jobs.StoredCatalogue(ctx, catalogueStore(db)), reads, src)
}

// ReadLimiter opens the limiter for reading. With no database and no
// Redis, the embedded limiter has spent nothing on this host: its pools
// are whole.
// It reads by c, the costs the report shows (Sources.Costs).
func (h *Host) ReadLimiter(db *Database, key string, c *ingest.Costs) (report.StateReader, func(), error) {
	if db == nil && h.RedisURL == "" {
		return report.WholePools{Costs: c}, func() {}, nil
	}
	return h.openLimiter(db, key, c)
}

// Serve is `ingest serve` as its checked flags give it.
type Serve struct {
	Schedule Schedule
	Plans    *ratelimit.APIPlans
	QuotaKey string // --quota-key; "" for none
	APIKey   string // YOUTUBE_API_KEY; "" when unset
	Standing ingest.Standing
	// Web is the listener: its address, whether it is public, its access
	// token, the trusted proxies and what the pages show.
	Web web.Config
	// Purge are the caches in front told of each landing (--purge-url).
	Purge []*url.URL
}

// OpenWeb builds serve's site over db (OpenSite), its report read from
// the upstream's limiter without spending; close releases both limiters
// (not db).
func (h *Host) OpenWeb(ctx context.Context, db *Database, sv Serve) (ui *web.Server, closeFn func(), err error) {
	src := report.Sources{DB: db, Costs: h.Costs, Timetable: sv.Schedule.Timetable, ScheduleFrom: "--every",
		Standing: sv.Standing, Held: HeldIn(db)}
	if err := Follow(ctx, sv.Schedule, db, &src); err != nil {
		return nil, nil, err
	}
	if src.QuotaKey, err = h.ReadQuotaKey(ctx, sv.QuotaKey, sv.APIKey, db); err != nil {
		return nil, nil, err
	}
	l, closeLimiter, err := h.ReadLimiter(db, src.QuotaKey, src.Costs)
	if err != nil {
		return nil, nil, err
	}
	src.Limiter = l
	m := metrics.NewAPI()
	ui, closeSite, err := h.OpenSite(ctx, db, Site{Report: src, Plans: sv.Plans, Web: sv.Web, Series: m, Scrape: m.Handler(), Purge: sv.Purge,
		Ready: web.ReadersReady(listener.Check{Name: "database", Passed: "readable", Probe: db.Reader().PingContext})})
	if err != nil {
		closeLimiter()
		return nil, nil, err
	}
	return ui, func() { closeSite(); closeLimiter() }, nil
}

// Serve serves ui on addr until SIGINT or SIGTERM (listener.Serve).
func (h *Host) Serve(ctx context.Context, addr string, ui http.Handler) error {
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	return listener.Serve(ctx, addr, ui, h.Logger, "db", h.DBName(), "token", os.Getenv(web.UITokenEnv) != "")
}

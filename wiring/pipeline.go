package wiring

import (
	"context"
	"net/http"
	"time"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/fetch"
	"github.com/ingestworks/ingest/jobs"
	"github.com/ingestworks/ingest/pace"
	"github.com/ingestworks/ingest/quota"
)

// Pipeline is everything a command that calls the upstream opens, closed
// in reverse order.
type Pipeline struct {
	QuotaKey string
	DB       *Database
	Limiter  Limiter
	Source   *fetch.Client
	Upstream *quota.UpstreamClock // the upstream's clock
	closers  []func()
}

// Close releases what OpenPipeline opened, last first.
func (p *Pipeline) Close() {
	for i := len(p.closers) - 1; i >= 0; i-- {
		p.closers[i]()
	}
}

// OpenPipeline opens, for the API key apiKey spending on quotaKey, the
// database, the limiter and the client. What would end the run with exit
// 2 is found before the database is created: Redis refusing RedisURL, a
// costs file the limiter disagrees with, a quota key nobody created, a bad
// endpoint.
func (h *Host) OpenPipeline(ctx context.Context, apiKey, quotaKey string) (*Pipeline, error) {
	return h.openPipeline(ctx, apiKey, quotaKey, nil)
}

// openPipeline is OpenPipeline on db when it is open already (Run's one
// open), which the pipeline then closes, even when it fails to open.
func (h *Host) openPipeline(ctx context.Context, apiKey, quotaKey string, db *Database) (*Pipeline, error) {
	p := &Pipeline{QuotaKey: quotaKey, DB: db}
	if db != nil {
		p.closers = append(p.closers, func() { db.Close() })
	}
	if err := h.checkRedis(ctx); err != nil {
		p.Close()
		return nil, err
	}
	if err := h.preflight(ctx, p.QuotaKey); err != nil {
		p.Close()
		return nil, err
	}
	if h.unreached && h.RefuseUnreached && !h.DBExists() {
		p.Close()
		return nil, h.neverReached("there is no database yet")
	}
	// The client first: a bad endpoint is a usage error, found before the
	// database is created.
	// Its Date headers go to the upstream's clock, set up with the
	// database below, before any call.
	onDate := func(ctx context.Context, at time.Time) { p.Upstream.Heard(h.Logger)(ctx, at) }
	var err error
	prepare := func(ctx context.Context) { p.Upstream.Prepare(ctx) }
	p.Source, err = fetch.New(ctx, fetch.Options{Endpoint: h.Endpoint, APIKey: apiKey, Logger: h.Logger, OnDate: onDate, Now: h.now, Prepare: prepare,
		HTTPClient: h.httpClient(), Jitter: h.Jitter})
	if err != nil {
		p.Close()
		return nil, configErrorf("--youtube-endpoint: %w", err)
	}
	if p.DB == nil {
		if p.DB, err = h.OpenStore(ctx); err != nil {
			return nil, err
		}
		p.closers = append(p.closers, func() { p.DB.Close() })
	}
	p.Upstream = h.UpstreamClock(p.DB)
	l, closeLimiter, err := h.OpenLimiter(p.DB, p.QuotaKey)
	if err != nil {
		p.Close()
		return nil, err
	}
	p.Limiter = l
	p.closers = append(p.closers, closeLimiter)
	r, onRedis := l.(*quota.Redis)
	for _, check := range []func() error{
		func() error { return quota.Agree(ctx, l, h.Logger) },
		func() error { return quota.Created(ctx, l) },
		func() error { return h.outage(ctx, p.DB, p.QuotaKey) },
		func() error { return h.rules().BeforeSpending(ctx, p.DB.Ledger, p.QuotaKey, onRedis) },
	} {
		if err := check(); err != nil {
			p.Close()
			return nil, err
		}
	}
	if onRedis {
		// The peers that spent since the last copy of the limiter's
		// ledgers are kept at the end too: a host that leaves Redis
		// after this run knows them (custody/peers.go).
		p.closers = append(p.closers, func() {
			// bounded: a Redis that stopped answering does not hold up the stop
			kctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
			defer cancel()
			r.KeepLedgers(kctx)
		})
		r.WarnForgetful(ctx, h.Logger)
		// Heartbeats keep this ledger's copy of the limiter's ledgers
		// fresh, and put its calls back when a recovery waits for them.
		beat, stop := context.WithCancel(context.WithoutCancel(ctx))
		done := make(chan struct{})
		go func() { defer close(done); r.Run(beat) }()
		p.closers = append(p.closers, func() { stop(); <-done })
	}
	return p, nil
}

// checkRedis finds, before the database is opened or created, whether
// Redis refuses RedisURL's credentials or database: a configuration error;
// and whether it answered at all (unreached).
func (h *Host) checkRedis(ctx context.Context) error {
	if h.RedisURL == "" {
		return nil
	}
	c, err := h.RedisClient()
	if err != nil {
		return err
	}
	defer c.Close()
	reached, err := quota.Reached(ctx, c, h.RedisURL, redisFlag, h.Logger)
	h.unreached = !reached
	return err
}

// outage refuses a run on a Redis never reached since the start that db
// never spent on: a mistyped URL or host looks exactly like an outage, and
// riding it out would spend unmetered beside a limiter that was never
// there. One db spent on before is an outage, ridden out as ever.
func (h *Host) outage(ctx context.Context, db *Database, key string) error {
	if !h.unreached || !h.RefuseUnreached {
		return nil
	}
	spent, err := h.rules().SpentOnRedis(ctx, db.Ledger, key)
	if err != nil || spent {
		return err
	}
	return h.neverReached("this database never spent on it")
}

// neverReached is the refusal of a Redis never reached since the start,
// naming its address (never its password) and why it is not an outage.
func (h *Host) neverReached(why string) error {
	_, addr := quota.Address(h.RedisURL)
	return configErrorf("%s: the Redis at %s has not answered since this process started, and %s: "+
		"a mistyped URL or host looks exactly like an outage, so nothing is spent unmetered; fix %s "+
		"(`ingest check` tries it), or, if it is an outage of the Redis this host is new to, run again with "+
		"--limiter-unreached-ok to go on within each pool's fail_open budget",
		redisFlag, addr, why, redisFlag)
}

// preflight checks, on a host with Redis and no database yet, what would
// end a run with exit 2 before it spends (quota.BeforeCreating). With a
// database, OpenPipeline checks the same after opening it (its ledger
// tells a lost key from a new one).
func (h *Host) preflight(ctx context.Context, key string) error {
	if h.RedisURL == "" || h.DBExists() {
		return nil
	}
	l, closeLimiter, err := h.OpenLimiter(nil, key)
	if err != nil {
		return err
	}
	defer closeLimiter()
	return quota.BeforeCreating(ctx, l)
}

// NewPacer plans a roster's entries at their kind's priority (a region's
// own chart first, its category charts a level below, the refresh of kept
// videos below them, tracking last), each never more often than its
// slots, stretching a region's own chart up to bound before it drops it
// (pace.DefaultBound when zero), from this database's ledger and runs, and
// publishes every plan it makes in the database. dueFrom says cron runs
// the entries (run --once), not their slots.
func (h *Host) NewPacer(p *Pipeline, ros *jobs.Roster, bound time.Duration, dueFrom bool) (*pace.Pacer, error) {
	es, err := ros.Entries()
	if err != nil {
		return nil, &ConfigError{Err: err}
	}
	entries := jobs.PaceEntries(es, h.Costs)
	led := p.DB.Ledger
	pc, err := newPacer(h.Costs, led, p.QuotaKey, pace.Config{State: p.Limiter.State, Entries: entries,
		LastPass: p.DB.LastCompletedStart,
		Daily:    jobs.DailyCost(h.Costs, ros.Runner.Charts()), Publish: pace.Keep(led, p.QuotaKey, h.Logger),
		Logger: h.Logger, Refresh: ros.Every, DueFrom: dueFrom, Bound: bound, Clock: h.clock()})
	if err != nil {
		return nil, &ConfigError{Err: err}
	}
	return pc, nil
}

// newPacer is the one construction of a pacer, the daemon's (NewPacer)
// and a reader's view of the plan it would follow (report.NewPacer) alike, so that
// the plan a report shows is made the way the daemon makes it: c's pools
// are the costs' and its history the ledger's records of quotaKey.
func newPacer(costs *ingest.Costs, records pace.Records, quotaKey string, c pace.Config) (*pace.Pacer, error) {
	c.Pools, c.History = costs.Pools, pace.FromRecords(records, quotaKey, costs.Pools)
	return pace.New(c)
}

// httpClient is the upstream client's base: nil (the network's) unless
// the host was given a Transport.
func (h *Host) httpClient() *http.Client {
	if h.Transport == nil {
		return nil
	}
	return &http.Client{Transport: h.Transport}
}

package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/fetch"
	"github.com/ingestworks/ingest/jobs"
	"github.com/ingestworks/ingest/quota"
	"github.com/ingestworks/ingest/report"
	"github.com/ingestworks/ingest/store"
	"github.com/ingestworks/ingest/wiring"
)

// openStore opens (creating and migrating) the database.
func (s *settings) openStore(ctx context.Context) (*store.DB, error) {
	db, err := store.Open(ctx, s.db)
	if err != nil {
		return nil, dbError(s.dbName(), err)
	}
	return db, nil
}

// dbName is --db as messages and logs show it: a URL without its password.
func (s *settings) dbName() string { return store.Redact(s.db) }

// dbExists says whether --db names a database that is there: a file, or
// a PostgreSQL server (whose schema the store checks when it opens).
func (s *settings) dbExists() bool { return store.Exists(s.db) }

// dbError is a database that did not open, as the user reads it: a path
// that cannot be used is a configuration error (exit 2) saying the fix.
func dbError(path string, err error) error {
	var pe *store.PathError
	var ve *store.VersionError
	switch {
	case errors.As(err, &pe):
		return usageErrorf("--db (INGEST_DB) %v", pe)
	case errors.As(err, &ve):
		return usageErrorf("--db (INGEST_DB) %v", ve)
	}
	return runtimeError(fmt.Errorf("open database %s: %w", path, err))
}

// backend is a limiter in every role, as openLimiter returns it; each
// command keeps it as the narrower role it needs.
type backend = wiring.Limiter

// openLimiter builds the Redis limiter when --redis is set, else the
// embedded one in the database (wiring.OpenLimiter). close releases the
// Redis client. db may be nil with Redis (a host without a database).
func (s *settings) openLimiter(db *store.DB, quotaKey string) (l backend, closeFn func(), err error) {
	opts := quota.Options{Costs: s.costs, Logger: s.logger, Replicas: s.replicaCount()}
	var d *wiring.Database
	up := quota.NoUpstreamClock
	if db != nil {
		d, up = &wiring.Database{DB: db, Where: store.Where(s.db)}, s.upstreamClock(db)
	}
	var client redis.UniversalClient
	closeFn = func() {}
	if s.redisURL != "" {
		if client, err = redisClient(s.redisURL); err != nil {
			return nil, nil, err
		}
		if err := s.redisAccess(context.Background(), client); err != nil {
			client.Close()
			return nil, nil, err
		}
		redis.SetLogger(redisLogger{s.logger})
		closeFn = func() { client.Close() }
	}
	if l, err = wiring.OpenLimiter(context.Background(), d, client, quotaKey, up, opts); err != nil {
		closeFn()
		return nil, nil, runtimeError(err)
	}
	return l, closeFn, nil
}

// openExisting opens the database for reading, with a usage hint when it
// does not exist yet (the error then matches store.ErrNoDatabase).
func openExisting(ctx context.Context, s *settings) (*store.DB, error) {
	db, err := store.OpenExisting(ctx, s.db)
	if errors.Is(err, store.ErrNoDatabase) {
		return nil, runtimeError(noneYetError{s.dbName()})
	}
	if err != nil {
		return nil, dbError(s.dbName(), err)
	}
	s.warnTerms(ctx, db)
	return db, nil
}

// noneYetError is a database that does not exist yet, as a command that
// needs it says so; it matches store.ErrNoDatabase.
type noneYetError struct{ db string }

func (e noneYetError) Error() string {
	return "no database at " + e.db + " yet: run `ingest run --once` first (or point --db / INGEST_DB at one)"
}

func (noneYetError) Is(target error) bool { return target == store.ErrNoDatabase }

// noneYet says, for a command that reads the stored data as empty when
// there is no database yet (docs/contract.md, Exit status), that there is
// none: a mistyped --db is seen.
func (s *settings) noneYet() {
	s.logger.Warn(fmt.Sprintf("no database at %s yet: nothing is stored (the first `ingest run` creates it; --db / INGEST_DB names another)", s.dbName()))
}

// jobLimiter is what the jobs and the daemon's endpoints need of the
// limiter: decisions, leases, and the pools' state.
type jobLimiter interface {
	jobs.Limiter
	jobs.Locker
	report.StateReader
}

// pipeline is everything a command that calls the upstream opens, closed
// in reverse order.
type pipeline struct {
	quotaKey string
	db       *store.DB
	limiter  jobLimiter
	source   *fetch.Client
	upstream *quota.UpstreamClock // the upstream's clock (clock.go)
	closers  []func()
}

func (p *pipeline) Close() {
	for i := len(p.closers) - 1; i >= 0; i-- {
		p.closers[i]()
	}
}

// openPipeline checks the key first (a usage error before anything is
// written), then opens the database, the limiter and the client.
func openPipeline(ctx context.Context, s *settings) (*pipeline, error) {
	key, err := apiKey()
	if err != nil {
		return nil, err
	}
	p := &pipeline{quotaKey: s.resolveQuotaKey(key)}
	if err := s.checkRedis(ctx); err != nil {
		return nil, err
	}
	if err := s.preflight(ctx, p.quotaKey); err != nil {
		return nil, err
	}
	// The client first: a bad endpoint is a usage error, found before the
	// database is created.
	// Its Date headers go to the upstream's clock, set up with the
	// database below, before any call.
	onDate := func(ctx context.Context, at time.Time) { s.sawDate(p.upstream)(ctx, at) }
	p.source, err = fetch.New(ctx, fetch.Options{Endpoint: s.endpoint, APIKey: key, Logger: s.logger, OnDate: onDate})
	if err != nil {
		return nil, usageErrorf("--youtube-endpoint: %w", err)
	}
	if p.db, err = s.openStore(ctx); err != nil {
		return nil, err
	}
	p.upstream = s.upstreamClock(p.db)
	p.closers = append(p.closers, func() { p.db.Close() })
	l, closeLimiter, err := s.openLimiter(p.db, p.quotaKey)
	if err != nil {
		p.Close()
		return nil, err
	}
	p.limiter = l
	p.closers = append(p.closers, closeLimiter)
	if err := agree(ctx, l, s.logger); err != nil {
		p.Close()
		return nil, err
	}
	if err := created(ctx, l); err != nil {
		p.Close()
		return nil, err
	}
	if r, ok := l.(*quota.Redis); ok {
		if kept, detail, err := r.Persistence(ctx); err == nil && !kept {
			s.logger.Warn("the Redis of the limiter keeps no data across a restart: use appendonly yes (see docs/quota.md)", "detail", detail)
		}
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
// Redis refuses --redis's credentials or database: a configuration error.
func (s *settings) checkRedis(ctx context.Context) error {
	if s.redisURL == "" {
		return nil
	}
	c, err := redisClient(s.redisURL)
	if err != nil {
		return err
	}
	defer c.Close()
	return s.redisAccess(ctx, c)
}

// preflight checks, on a host with Redis and no database yet, what would
// end a run with exit 2 before it spends: a costs file the limiter
// disagrees with, a quota key nobody created. A run that exits 2 so leaves
// no new database behind. With a database, openPipeline checks the same
// after opening it (its ledger tells a lost key from a new one).
func (s *settings) preflight(ctx context.Context, key string) error {
	if s.redisURL == "" || s.dbExists() {
		return nil
	}
	l, closeLimiter, err := s.openLimiter(nil, key)
	if err != nil {
		return err
	}
	defer closeLimiter()
	var cerr *quota.ConfigError
	if err := l.CheckConfig(ctx); errors.As(err, &cerr) {
		return usageErrorf("--costs: %w", err)
	}
	return created(ctx, l)
}

// created is a usage error when the limiter is Redis and holds no
// configuration for a key this ledger never spent on (quota.ErrNotApplied).
func created(ctx context.Context, l backend) error {
	r, ok := l.(*quota.Redis)
	if !ok {
		return nil
	}
	if err := r.Created(ctx); errors.Is(err, quota.ErrNotApplied) {
		return usageErrorf("--redis / REDIS_URL: %w", err)
	}
	return nil
}

// agree checks, before anything is spent, that the limiter holds the same
// pools as this costs file: a disagreement is a configuration error.
// When the limiter cannot be asked, each call meets the same check (or the
// fail policy) later.
func agree(ctx context.Context, l interface{ CheckConfig(context.Context) error }, log *slog.Logger) error {
	err := l.CheckConfig(ctx)
	var cerr *quota.ConfigError
	switch {
	case errors.As(err, &cerr):
		return usageErrorf("--costs: %w", err)
	case err != nil:
		log.Warn("could not check the limiter's configuration before starting", ingest.LogErr, err)
	}
	return nil
}

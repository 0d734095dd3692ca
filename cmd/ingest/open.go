package main

import (
	"context"
	"fmt"
	"time"

	"github.com/ingestworks/ingest/store"
	"github.com/ingestworks/ingest/wiring"
)

// host is what these settings open from (wiring.Host), made once the
// command's settings are checked. Its errors reach the user as they are:
// a wiring.ConfigError exits 2, any other 1 (runtimeError).
func (s *settings) host() *wiring.Host {
	if s.wired == nil {
		s.wired = &wiring.Host{DSN: s.db, DefaultDB: s.dbDefault, RedisURL: s.redisURL, Endpoint: s.endpoint,
			Costs: s.costs, Logger: s.logger, Replicas: s.replicaCount(), Clock: s.clock}
	}
	return s.wired
}

// dbName is --db as messages and logs show it: a URL without its password.
func (s *settings) dbName() string { return store.Redact(s.db) }

// openExisting opens the database for reading, with a usage hint when it
// does not exist yet (the error then matches store.ErrNoDatabase).
func openExisting(ctx context.Context, s *settings) (*wiring.Database, error) {
	db, err := s.host().OpenExisting(ctx)
	if err != nil {
		return nil, err
	}
	s.warnTerms(ctx, db)
	return db, nil
}

// noneYet says, for a command that reads the stored data as empty when
// there is no database yet (docs/contract.md, Exit status), that there is
// none: a mistyped --db is seen.
func (s *settings) noneYet() {
	s.logger.Warn(fmt.Sprintf("no database at %s yet: nothing is stored (the first `ingest run` creates it; --db / INGEST_DB names another)", s.dbName()))
}

// now is the house clock's time (settings.clock, built as the settings
// are resolved, before any command runs).
func (s *settings) now() time.Time { return s.clock.Now() }

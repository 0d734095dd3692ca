package main

import (
	"context"
	"time"

	"github.com/ingestworks/ingest/jobs"
	"github.com/ingestworks/ingest/wiring"
)

// The key's standing under the upstream's terms, as the commands apply it
// (docs/explanation/terms.md): the prune it implies, the refusal of a run on a database
// that holds more than it allows, and the warning of the commands that only
// read.

// checkTerms is check's line for the key's standing: what it lets the
// database keep and show, and whether the database holds more.
func checkTerms(ctx context.Context, s *settings) (string, error) {
	line := s.standing.String()
	db, err := s.host().OpenIfAny(ctx)
	if err != nil || db == nil {
		return line, nil // the database's own check says why
	}
	defer db.Close()
	if msg, err := s.terms().Beyond(ctx, db); err != nil || msg != "" {
		if err == nil {
			err = usageErrorf("%s", msg)
		}
		return "", err
	}
	return line, nil
}

// terms is the standing as these settings apply it (wiring.Terms).
func (s *settings) terms() wiring.Terms {
	return wiring.Terms{Standing: s.standing, Span: s.costs.Span(), Clock: s.clock}
}

// pruneJob is the prune the standing implies (wiring.Terms.PruneJob).
func (s *settings) pruneJob(db *wiring.Database, keep time.Duration, drain <-chan struct{}) *jobs.Prune {
	return s.terms().PruneJob(db, keep, drain)
}

// checkKeep reads --keep, which may not be longer than the standing
// allows; "" is the standing's allowance.
func (s *settings) checkKeep(text string) (time.Duration, error) {
	if text == "" {
		return s.standing.StatsFor, nil
	}
	keep, err := parseKeep(text)
	if err != nil {
		return 0, usageErrorf("--keep: %v", err)
	}
	if err := s.standing.Check(keep); err != nil {
		return 0, usageErrorf("--keep: %v; under extended, --stats-retention (INGEST_STATS_RETENTION) says what the acceptance grants (docs/explanation/terms.md)", err)
	}
	return keep, nil
}

// warnTerms is the warning of a command that only reads, once a process,
// when the database holds more than the standing allows.
func (s *settings) warnTerms(ctx context.Context, db *wiring.Database) {
	if s.termsWarned {
		return
	}
	s.termsWarned = true
	if msg, err := s.terms().Beyond(ctx, db); err == nil && msg != "" {
		s.logger.Warn(msg)
	}
}

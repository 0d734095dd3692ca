package main

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/jobs"
	"github.com/ingestworks/ingest/store"
	"github.com/ingestworks/ingest/wiring"
)

// The key's standing under the upstream's terms, as the commands apply it
// (docs/terms.md): the prune it implies, the refusal of a run on a database
// that holds more than it allows, and the warning of the commands that only
// read.

// keptNote is the database's note of the longest statistics were last
// held to by a prune under a standing (milliseconds): data beyond the
// standing in a database kept so is a prune's lag, pruned by the next one;
// in any other (an upgrade, a standing lowered), it would be a surprise.
const keptNote = "terms_kept_ms"

// checkTerms is check's line for the key's standing: what it lets the
// database keep and show, and whether the database holds more.
func checkTerms(ctx context.Context, c *checkEnv) (string, error) {
	line := c.s.standing.String()
	db, err := store.OpenExisting(ctx, c.s.db)
	if err != nil {
		return line, nil // the database's own check says why
	}
	defer db.Close()
	if msg, err := termsBeyond(ctx, c.s, db); err != nil || msg != "" {
		if err == nil {
			err = usageErrorf("%s", msg)
		}
		return "", err
	}
	return line, nil
}

// pruneJob is the prune the standing implies, keeping keep of statistics
// (the standing's whole allowance when zero).
func (s *settings) pruneJob(db *store.DB, keep time.Duration, drain <-chan struct{}) *jobs.Prune {
	return &jobs.Prune{Standing: s.standing, Keep: keep, Span: s.costs.Span(), Store: wiring.PruneStore{DB: db}, Drain: drain}
}

// refreshJob fetches again, by id, the videos kept rows show before their
// text is too old (jobs.Refresh).
func (s *settings) refreshJob(p *pipeline, lim jobs.Limiter, drain <-chan struct{}) *jobs.Refresh {
	return &jobs.Refresh{QuotaKey: p.QuotaKey, Costs: s.costs, Limiter: lim, Source: p.Source, Store: p.DB,
		Logger: s.logger.With(ingest.LogOp, ingest.OpVideosList), Drain: drain}
}

var _ jobs.RefreshStore = (*store.DB)(nil)

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
		return 0, usageErrorf("--keep: %v; under extended, --stats-retention (INGEST_STATS_RETENTION) says what the acceptance grants (docs/terms.md)", err)
	}
	return keep, nil
}

// termsBeyond says, in a message naming the two ways on, whether db holds
// data older than the standing allows that no prune under a standing
// allowing it has kept it to: an upgraded database, or a standing lowered.
// "" when it holds none, or only a scheduled prune's lag.
func termsBeyond(ctx context.Context, s *settings, db *store.DB) (string, error) {
	now := time.Now()
	job := s.pruneJob(db, 0, nil)
	held, err := db.Held(ctx)
	if err != nil {
		return "", err
	}
	cuts := job.Cuts(now)
	older := func(at, cut time.Time) bool { return !at.IsZero() && !cut.IsZero() && at.Before(cut) }
	if !older(held.Stat, cuts.Stats) && !older(held.Search, cuts.Search) && !older(held.Category, cuts.Categories) &&
		!older(held.Video, cuts.Videos) {
		return "", nil
	}
	if kept, err := keptTo(ctx, db); err != nil || (kept > 0 && kept <= s.standing.StatsFor) {
		return "", err
	}
	b, err := db.Beyond(ctx, wiring.Retention(cuts))
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("the database holds data older than the %s standing allows (statistics %s, other data %s): "+
		"%s (the oldest statistic from %s). Nothing was deleted or spent. Either see what would go and delete it: "+
		"`ingest prune --terms --dry-run`, then `ingest prune --terms`; or state the key's standing: "+
		"--standing extended --stats-retention 400d (INGEST_STANDING, INGEST_STATS_RETENTION), if an acceptance under "+
		"the derived-metrics policy grants it (docs/terms.md)",
		s.standing.Name(), ingest.Days(s.standing.StatsFor), ingest.Days(s.standing.DataKeep()), b,
		day(held.Stat)), nil
}

func day(t time.Time) string {
	if t.IsZero() {
		return "none"
	}
	return t.UTC().Format(time.DateOnly)
}

// keptTo reads keptNote; 0 when no prune under a standing has run.
func keptTo(ctx context.Context, db *store.DB) (time.Duration, error) {
	v, err := db.Noted(ctx, keptNote)
	if err != nil || v == "" {
		return 0, err
	}
	ms, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return 0, nil // unreadable: as if never kept
	}
	return time.Duration(ms) * time.Millisecond, nil
}

// noteKept records that db now holds statistics of keep at most.
func noteKept(ctx context.Context, db *store.DB, keep time.Duration) error {
	return db.Note(ctx, keptNote, strconv.FormatInt(keep.Milliseconds(), 10))
}

// termsGate is run's check before anything is spent: a database holding
// more than the standing allows, which no prune under it has kept, is a
// configuration error (exit 2) naming the two ways on. A database that
// holds nothing beyond is noted as kept under the standing, so that the
// scheduled prune's lag is never taken for an upgrade.
func termsGate(ctx context.Context, s *settings, db *store.DB) error {
	msg, err := termsBeyond(ctx, s, db)
	switch {
	case err != nil:
		return runtimeError(fmt.Errorf("the terms' check: %w", err))
	case msg != "":
		return usageErrorf("%s", msg)
	}
	if kept, err := keptTo(ctx, db); err != nil || (kept > 0 && kept <= s.standing.StatsFor) {
		return runtimeError(err)
	}
	return runtimeError(noteKept(ctx, db, s.standing.StatsFor))
}

// warnTerms is the warning of a command that only reads, once a process,
// when the database holds more than the standing allows.
func (s *settings) warnTerms(ctx context.Context, db *store.DB) {
	if s.termsWarned {
		return
	}
	s.termsWarned = true
	if msg, err := termsBeyond(ctx, s, db); err == nil && msg != "" {
		s.logger.Warn(msg)
	}
}

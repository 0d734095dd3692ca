package wiring

// The key's standing under the upstream's terms as a host applies it to
// its database (docs/explanation/terms.md): the prune it implies, and the refusal of a
// run on a database that holds more than it allows.

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/clock"
	"github.com/ingestworks/ingest/jobs"
	"github.com/ingestworks/ingest/retention"
)

// keptNote is the database's note of the longest statistics were last
// held to by a prune under a standing (milliseconds): data beyond the
// standing in a database kept so is a prune's lag, pruned by the next one;
// in any other (an upgrade, a standing lowered), it would be a surprise.
const keptNote = "terms_kept_ms"

// Terms is the key's standing, and the span of the quota (whose ledger a
// prune keeps).
type Terms struct {
	Standing ingest.Standing
	Span     time.Duration
	Clock    clock.Clock // the house's; required
}

// PruneJob is the prune the standing implies, keeping keep of statistics
// (the standing's whole allowance when zero).
func (t Terms) PruneJob(db *Database, keep time.Duration, drain <-chan struct{}) *jobs.Prune {
	return &jobs.Prune{Standing: t.Standing, Keep: keep, Span: t.Span, Store: PruneStore{DB: db.DB}, Drain: drain,
		Clock: t.Clock}
}

// Beyond says, in a message naming the two ways on, whether db holds
// data older than the standing allows that no prune under a standing
// allowing it has kept it to: an upgraded database, or a standing lowered.
// "" when it holds none, or only a scheduled prune's lag.
func (t Terms) Beyond(ctx context.Context, db *Database) (string, error) {
	now := t.Clock.Now()
	job := t.PruneJob(db, 0, nil)
	held, err := retention.ReadHeld(ctx, db.DB)
	if err != nil {
		return "", err
	}
	cuts := job.Cuts(now)
	older := func(at, cut time.Time) bool { return !at.IsZero() && !cut.IsZero() && at.Before(cut) }
	if !older(held.Stat, cuts.Stats) && !older(held.Search, cuts.Search) && !older(held.Category, cuts.Categories) &&
		!older(held.Video, cuts.Videos) {
		return "", nil
	}
	if kept, err := keptTo(ctx, db); err != nil || (kept > 0 && kept <= t.Standing.StatsFor) {
		return "", err
	}
	b, err := retention.Count(ctx, db.DB, Retention(cuts))
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("the database holds data older than the %s standing allows (statistics %s, other data %s): "+
		"%s (the oldest statistic from %s). Nothing was deleted or spent. Either see what would go and delete it: "+
		"`ingest prune --terms --dry-run`, then `ingest prune --terms`; or state the key's standing: "+
		"--standing extended --stats-retention 400d (INGEST_STANDING, INGEST_STATS_RETENTION), if an acceptance under "+
		"the derived-metrics policy grants it (docs/explanation/terms.md)",
		t.Standing.Name(), ingest.Days(t.Standing.StatsFor), ingest.Days(t.Standing.DataKeep()), b,
		day(held.Stat)), nil
}

func day(t time.Time) string {
	if t.IsZero() {
		return "none"
	}
	return t.UTC().Format(time.DateOnly)
}

// keptTo reads keptNote; 0 when no prune under a standing has run.
func keptTo(ctx context.Context, db *Database) (time.Duration, error) {
	v, err := db.Ledger.Noted(ctx, keptNote)
	if err != nil || v == "" {
		return 0, err
	}
	ms, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return 0, nil // unreadable: as if never kept
	}
	return time.Duration(ms) * time.Millisecond, nil
}

// NoteKept records that db now holds statistics of keep at most.
func NoteKept(ctx context.Context, db *Database, keep time.Duration) error {
	return db.Ledger.Note(ctx, keptNote, strconv.FormatInt(keep.Milliseconds(), 10))
}

// Gate is run's check before anything is spent: a database holding more
// than the standing allows, which no prune under it has kept, is a
// configuration error naming the two ways on. A database that holds
// nothing beyond is noted as kept under the standing, so that the
// scheduled prune's lag is never taken for an upgrade.
func (t Terms) Gate(ctx context.Context, db *Database) error {
	msg, err := t.Beyond(ctx, db)
	switch {
	case err != nil:
		return fmt.Errorf("the terms' check: %w", err)
	case msg != "":
		return configErrorf("%s", msg)
	}
	if kept, err := keptTo(ctx, db); err != nil || (kept > 0 && kept <= t.Standing.StatsFor) {
		return err
	}
	return NoteKept(ctx, db, t.Standing.StatsFor)
}

// HeldIn reads how far back db's data reaches, for the report.
func HeldIn(db *Database) func(context.Context) (retention.Held, error) {
	return func(ctx context.Context) (retention.Held, error) { return retention.ReadHeld(ctx, db.DB) }
}

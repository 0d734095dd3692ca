package retention

// The key's standing under the upstream's terms as a host applies it to
// its database (docs/explanation/terms.md): the refusal of a run on a database that
// holds more than it allows, unless a prune under a standing that allows
// it kept it so (the scheduled prune's lag).

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/store"
)

// keptNote is the database's note of the longest statistics were last
// held to by a prune under a standing (milliseconds): data beyond the
// standing in a database kept so is a prune's lag, pruned by the next one;
// in any other (an upgrade, a standing lowered), it would be a surprise.
const keptNote = "terms_kept_ms"

// Notes are the database's notes, where what a prune kept it to is noted
// (the ledger's).
type Notes interface {
	Note(ctx context.Context, name, value string) error
	Noted(ctx context.Context, name string) (string, error)
}

// OverStanding says, in a message naming the two ways on, whether db holds
// data older than standing allows (cuts: its prune's, now) that no prune
// under a standing allowing it has kept it to: an upgraded database, or a
// standing lowered. "" when it holds none, or only a scheduled prune's lag.
func OverStanding(ctx context.Context, db *store.DB, notes Notes, standing ingest.Standing, cuts Retention) (string, error) {
	held, err := ReadHeld(ctx, db)
	if err != nil {
		return "", err
	}
	older := func(at, cut time.Time) bool { return !at.IsZero() && !cut.IsZero() && at.Before(cut) }
	if !older(held.Stat, cuts.Before) && !older(held.Search, cuts.SearchBefore) && !older(held.Category, cuts.CategoriesBefore) &&
		!older(held.Video, cuts.VideosBefore) {
		return "", nil
	}
	if kept, err := keptTo(ctx, notes); err != nil || (kept > 0 && kept <= standing.StatsFor) {
		return "", err
	}
	b, err := Count(ctx, db, cuts)
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("the database holds data older than the %s standing allows (statistics %s, other data %s): "+
		"%s (the oldest statistic from %s). Nothing was deleted or spent. Either see what would go and delete it: "+
		"`ingest prune --terms --dry-run`, then `ingest prune --terms`; or state the key's standing: "+
		"--standing extended --stats-retention 400d (INGEST_STANDING, INGEST_STATS_RETENTION), if an acceptance under "+
		"the derived-metrics policy grants it (docs/explanation/terms.md)",
		standing.Name(), ingest.Days(standing.StatsFor), ingest.Days(standing.DataKeep()), b,
		day(held.Stat)), nil
}

func day(t time.Time) string {
	if t.IsZero() {
		return "none"
	}
	return t.UTC().Format(time.DateOnly)
}

// keptTo reads keptNote; 0 when no prune under a standing has run.
func keptTo(ctx context.Context, notes Notes) (time.Duration, error) {
	v, err := notes.Noted(ctx, keptNote)
	if err != nil || v == "" {
		return 0, err
	}
	ms, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return 0, nil // unreadable: as if never kept
	}
	return time.Duration(ms) * time.Millisecond, nil
}

// NoteKept records that the database now holds statistics of keep at most.
func NoteKept(ctx context.Context, notes Notes, keep time.Duration) error {
	return notes.Note(ctx, keptNote, strconv.FormatInt(keep.Milliseconds(), 10))
}

// Gate is run's check before anything is spent: a database holding more
// than standing allows, which no prune under it has kept, is a
// configuration error naming the two ways on. A database that holds
// nothing beyond is noted as kept under the standing, so that the
// scheduled prune's lag is never taken for an upgrade.
func Gate(ctx context.Context, db *store.DB, notes Notes, standing ingest.Standing, cuts Retention) error {
	msg, err := OverStanding(ctx, db, notes, standing, cuts)
	switch {
	case err != nil:
		return fmt.Errorf("the terms' check: %w", err)
	case msg != "":
		return ingest.ConfigErrorf("%s", msg)
	}
	if kept, err := keptTo(ctx, notes); err != nil || (kept > 0 && kept <= standing.StatsFor) {
		return err
	}
	return NoteKept(ctx, notes, standing.StatsFor)
}

// CopyGate is a copy's check of a source it cannot prune first (a
// PostgreSQL database; a SQLite file's snapshot is pruned under the
// standing instead, UnderStanding): a source holding more than standing
// allows is a configuration error, for the copy would carry it. Unlike
// Gate, it notes nothing on the source.
func CopyGate(ctx context.Context, db *store.DB, notes Notes, standing ingest.Standing, cuts Retention) error {
	msg, err := OverStanding(ctx, db, notes, standing, cuts)
	if err != nil || msg == "" {
		return err
	}
	return ingest.ConfigErrorf("db copy: %s", msg)
}

// UnderStanding prunes db to what standing allows (cuts: its prune's, with
// the standing's whole allowance of statistics), says on say what it cut,
// and notes db as kept under the standing: a copy's snapshot, so that the
// target's first run takes what ages past the standing meanwhile for the
// scheduled prune's lag.
func UnderStanding(ctx context.Context, db *store.DB, notes Notes, standing ingest.Standing, cuts Retention, say io.Writer) error {
	p, err := Prune(ctx, db, cuts)
	if err != nil {
		return err
	}
	if p.Runs+p.Stats+p.Videos+p.Search+p.Categories > 0 {
		fmt.Fprintf(say, "not copied, beyond what the %s standing allows: %d chart runs with %d entries, "+
			"%d tracked counts, %d videos, %d backfill results, %d category names\n",
			standing.Name(), p.Runs, p.Entries, p.Stats, p.Videos, p.Search, p.Categories)
	}
	return NoteKept(ctx, notes, standing.StatsFor)
}

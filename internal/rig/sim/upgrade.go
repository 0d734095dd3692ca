package sim

import (
	"context"
	"fmt"

	"github.com/ingestworks/ingest/wiring"
)

// An upgrade (Config.Upgrades): the process is started again on its
// database as a release before the terms' note left it, a database that
// holds what the daemon stored and no note of the retention it was last
// pruned to. docs/explanation/terms.md: such a database starts unless it
// holds data older than the standing allows; one that holds none is
// noted, and runs on. A start refused there is the daemon's end, and the
// history's error.

// keptNoteName is the note an older release did not write
// (retention.NoteKept's).
const keptNoteName = "terms_kept_ms"

// unnote removes the terms' note from the database at dsn, while no
// process has it open: the note must be there, or the world built is
// not the one meant.
func unnote(dsn string) error {
	ctx := context.Background()
	db, err := wiring.Open(ctx, dsn)
	if err != nil {
		return err
	}
	defer db.Close()
	res, err := db.DB.Writer().ExecContext(ctx, `DELETE FROM ledger_notes WHERE name = ?`, keptNoteName)
	if err != nil {
		return fmt.Errorf("upgrade: forget the terms' note: %w", err)
	}
	if n, err := res.RowsAffected(); err != nil || n != 1 {
		return fmt.Errorf("upgrade: the database held %d notes %s to forget (%v)", n, keptNoteName, err)
	}
	return nil
}

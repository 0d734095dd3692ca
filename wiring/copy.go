package wiring

// The databases of `ingest db copy`: its source (a PostgreSQL database, or
// a snapshot of a SQLite file, pruned to what the standing allows), its
// target, the source's worker that may still write it, and the note of
// where a copy came from. cmd says what happens; what is opened and
// written is opened here.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/ingestworks/ingest/custody"
	"github.com/ingestworks/ingest/dbcopy"
	"github.com/ingestworks/ingest/ledger"
	"github.com/ingestworks/ingest/retention"
	"github.com/ingestworks/ingest/store"
)

// CopyTarget opens the database a copy writes into, creating it.
func (h *Host) CopyTarget(ctx context.Context, to string) (*Database, error) {
	db, err := Open(ctx, to)
	if err != nil {
		return nil, fmt.Errorf("db copy: target: %w", err)
	}
	return db, nil
}

// Salvage reads what still reads of the damaged SQLite file --db names
// (ingest db recover), with none of the checks a damaged file would
// fail, into the new database out, created by the migrations; progress
// hears each table. dst is the salvage, open, when it was created, for
// the caller's check and close, whatever err says.
func (h *Host) Salvage(ctx context.Context, out string, progress func(t dbcopy.Salvaged, done, total int64)) (got []dbcopy.Salvaged, dst *Database, err error) {
	src, err := store.OpenDamaged(ctx, h.DSN)
	var pe *store.PathError
	if errors.As(err, &pe) {
		return nil, nil, configErrorf("db recover: --db %w", err)
	} else if err != nil {
		return nil, nil, fmt.Errorf("db recover: %w", err)
	}
	defer src.Close()
	if dst, err = Open(ctx, out); err != nil {
		return nil, nil, fmt.Errorf("db recover: --out: %w", err)
	}
	got, err = dbcopy.Salvage(ctx, src, dst.DB, progress)
	return got, dst, err
}

// CopySourceWrites opens --db itself for a copy's writes to it: its notes
// of the rows that change (dbcopy.Track, Carry, Untrack).
func (h *Host) CopySourceWrites(ctx context.Context) (*Database, error) {
	db, err := Open(ctx, h.DSN)
	if err != nil {
		return nil, fmt.Errorf("db copy: source: %w", err)
	}
	return db, nil
}

// LiveSource is a *LiveError naming --db's workers when one still holds
// its lease; nil when none does (custody.LiveSource).
func (h *Host) LiveSource(ctx context.Context) (*LiveError, error) {
	db, err := OpenExisting(ctx, h.DSN)
	if err != nil {
		return nil, fmt.Errorf("db copy: source: %w", err)
	}
	defer db.Close()
	return custody.LiveSource(ctx, db.custody(), h.DBName())
}

// CopySource opens what a copy into to reads: a PostgreSQL --db holding
// nothing terms do not allow, or a snapshot of a SQLite file with what
// terms do not allow pruned from it (said on say), kept until the copy is
// whole; fresh says the snapshot was taken now.
func (h *Host) CopySource(ctx context.Context, to string, terms Terms, say io.Writer) (db *Database, fresh bool, err error) {
	if store.IsURL(h.DSN) {
		db, err := OpenExisting(ctx, h.DSN)
		if err != nil {
			return nil, false, fmt.Errorf("db copy: source: %w", err)
		}
		if err := retention.CopyGate(ctx, db.DB, db.Ledger, terms.Standing, terms.cuts(db)); err != nil {
			db.Close()
			return nil, false, err
		}
		return db, false, nil
	}
	snap := dbcopy.SnapshotOf(h.DSN, to)
	if _, err := os.Stat(snap); err != nil {
		if err := takeSnapshot(ctx, h.DSN, snap, terms, say); err != nil {
			return nil, false, err
		}
		fresh = true
	}
	if db, err = Open(ctx, snap); err != nil {
		return nil, false, fmt.Errorf("db copy: source snapshot: %w", err)
	}
	return db, fresh, nil
}

// takeSnapshot writes snap from the SQLite file path (dbcopy.TakeSnapshot),
// pruned under the standing (retention.UnderStanding), what it cut said on
// say.
func takeSnapshot(ctx context.Context, path, snap string, terms Terms, say io.Writer) error {
	var db *Database
	open := func(ctx context.Context, path string) (*store.DB, *ledger.Ledger, error) {
		var err error
		if db, err = Open(ctx, path); err != nil {
			return nil, nil, err
		}
		return db.DB, db.Ledger, nil
	}
	return dbcopy.TakeSnapshot(ctx, path, snap, terms.Clock.Now(), open, func(ctx context.Context, _ *store.DB, _ *ledger.Ledger) error {
		return retention.UnderStanding(ctx, db.DB, db.Ledger, terms.Standing, terms.cuts(db), say)
	})
}

// RemoveSnapshot is the end of a copy of --db into to: a SQLite source's
// snapshot is removed.
func (h *Host) RemoveSnapshot(to string) {
	if store.IsURL(h.DSN) {
		return
	}
	dbcopy.RemoveFile(dbcopy.SnapshotOf(h.DSN, to))
}

// DryRunCopy is the image of a SQLite database a dry run of the prune
// runs on (dbcopy.DryRunImage), opened; drop closes and removes it.
func (h *Host) DryRunCopy(ctx context.Context) (*Database, func(), error) {
	image, drop, err := dbcopy.DryRunImage(ctx, h.DSN)
	if err != nil {
		return nil, nil, err
	}
	copied, err := Open(ctx, image)
	if err != nil {
		drop()
		return nil, nil, err
	}
	return copied, func() { copied.Close(); drop() }, nil
}

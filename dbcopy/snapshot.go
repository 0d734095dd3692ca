package dbcopy

// The snapshot a copy of a SQLite file reads: taken beside the file, one
// per target, pruned to what the standing allows before it is renamed
// into place, and kept until the copy is whole.

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/ingestworks/ingest/ledger"
	"github.com/ingestworks/ingest/store"
)

// SnapshotOf is where a copy of the SQLite file db into to keeps its
// snapshot: beside db, one per target.
func SnapshotOf(db, to string) string {
	sum := sha256.Sum256([]byte(store.Where(to)))
	return db + ".copy-" + hex.EncodeToString(sum[:4])
}

// TakeSnapshot writes snap from the SQLite file path, opened by open (the
// one open of a database, with its ledger), noted as taken at now, with
// prune run on it (what the standing does not allow cut, and
// the snapshot noted as kept under it, so that the target's first run
// takes what ages past the standing meanwhile for the scheduled prune's
// lag), and renames it into place only then: a resumed copy reads the
// same rows as the copy that stopped.
func TakeSnapshot(ctx context.Context, path, snap string, now time.Time, open func(context.Context, string) (*store.DB, *ledger.Ledger, error), prune func(context.Context, *store.DB, *ledger.Ledger) error) error {
	part := snap + ".new"
	RemoveFile(part)
	if err := store.Snapshot(ctx, path, part); err != nil {
		return fmt.Errorf("db copy: %w", err)
	}
	db, led, err := open(ctx, part)
	if err != nil {
		return fmt.Errorf("db copy: source snapshot: %w", err)
	}
	if err := Untrack(ctx, db, func(error) {}); err != nil { // the source's notes, not the snapshot's: a SQLite file no worker writes
		db.Close()
		return fmt.Errorf("db copy: source snapshot: %w", err)
	}
	if err := led.Note(ctx, SnapshotNote, strconv.FormatInt(now.UnixNano(), 36)); err != nil {
		db.Close()
		return fmt.Errorf("db copy: source snapshot: %w", err)
	}
	if err := errors.Join(prune(ctx, db, led), db.Close()); err != nil {
		return fmt.Errorf("db copy: prune the snapshot under the standing: %w", err)
	}
	return os.Rename(part, snap)
}

// RemoveFile removes a SQLite file with its write-ahead log and shared
// memory beside it.
func RemoveFile(path string) {
	for _, f := range []string{path, path + "-wal", path + "-shm"} {
		os.Remove(f)
	}
}

// DryRunImage is a consistent page-for-page image of the SQLite database
// at path (store.Image), hidden beside it and named for this process, on
// which prune --dry-run runs the real prune, so that what it says is what
// the prune does, the ledger's rows and the bytes it frees included; drop
// removes it.
func DryRunImage(ctx context.Context, path string) (image string, drop func(), err error) {
	image = filepath.Join(filepath.Dir(path), fmt.Sprintf(".%s.dry-run.%d", filepath.Base(path), os.Getpid()))
	if err := store.Image(ctx, path, image); err != nil {
		return "", nil, fmt.Errorf("prune --dry-run: copy the database to prune it there: %w (it needs the database's size free beside it)", err)
	}
	return image, func() { RemoveFile(image) }, nil
}

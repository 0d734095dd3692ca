package dbcopy

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ingestworks/ingest/ledger"
	"github.com/ingestworks/ingest/store"
)

// TestTakeSnapshot: a copy's snapshot of a SQLite file is taken beside
// it, one per target, noted with when it was taken, pruned before it is
// renamed into place, and not put in place at all when its prune fails.
func TestTakeSnapshot(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "src.db")
	src, err := store.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	if err := ledger.New(src).Note(ctx, "source", "kept"); err != nil {
		t.Fatal(err)
	}
	src.Close()
	if a, b := SnapshotOf(path, "a.db"), SnapshotOf(path, "b.db"); a == b || filepath.Dir(a) != filepath.Dir(path) {
		t.Errorf("snapshots %q and %q: want one per target, beside %q", a, b, path)
	}
	now := time.Unix(1_800_000_000, 0)
	t.Run("pruned, then in place", func(t *testing.T) {
		snap := SnapshotOf(path, "a.db")
		pruned := false
		err := TakeSnapshot(ctx, path, snap, now, openBoth, func(ctx context.Context, db *store.DB, led *ledger.Ledger) error {
			if _, err := os.Stat(snap); err == nil {
				t.Error("the snapshot is in place before its prune")
			}
			pruned = db.Path() != path
			return nil
		})
		if err != nil || !pruned {
			t.Fatalf("err %v, pruned the snapshot %v", err, pruned)
		}
		db, err := store.Open(ctx, snap)
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		led := ledger.New(db)
		if got, _ := led.Noted(ctx, SnapshotNote); got != strconv.FormatInt(now.UnixNano(), 36) {
			t.Errorf("snapshot note %q, want the time it was taken", got)
		}
		if got, _ := led.Noted(ctx, "source"); got != "kept" {
			t.Errorf("the source's note %q in the snapshot, want kept", got)
		}
	})
	t.Run("a failed prune leaves none", func(t *testing.T) {
		snap := SnapshotOf(path, "b.db")
		err := TakeSnapshot(ctx, path, snap, now, openBoth, func(context.Context, *store.DB, *ledger.Ledger) error { return errors.New("no") })
		if err == nil {
			t.Error("a failed prune took a snapshot")
		}
		if _, err := os.Stat(snap); err == nil {
			t.Error("the snapshot of a failed prune is in place")
		}
		RemoveFile(snap + ".new")
		if _, err := os.Stat(snap + ".new"); err == nil {
			t.Error("RemoveFile left the file")
		}
	})
}

// openBoth opens a database at path with its ledger, as wiring's one open
// does.
func openBoth(ctx context.Context, path string) (*store.DB, *ledger.Ledger, error) {
	db, err := store.Open(ctx, path)
	if err != nil {
		return nil, nil, err
	}
	return db, ledger.New(db), nil
}

// TestDryRunImage: a dry run's image of a SQLite file is hidden beside it,
// named for the file and this process, holds what the file holds, and is
// gone, with its log, once dropped.
func TestDryRunImage(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "ingest.db")
	src, err := store.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	if err := ledger.New(src).Note(ctx, "source", "kept"); err != nil {
		t.Fatal(err)
	}
	src.Close()
	image, drop, err := DryRunImage(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(filepath.Dir(path), ".ingest.db.dry-run."+strconv.Itoa(os.Getpid())); image != want {
		t.Errorf("the image is %q, want %q", image, want)
	}
	db, err := store.OpenExisting(ctx, image)
	if err != nil {
		t.Fatal(err)
	}
	if v, err := ledger.New(db).Noted(ctx, "source"); err != nil || v != "kept" {
		t.Errorf("the image's note %q (%v), want the file's", v, err)
	}
	db.Close()
	drop()
	for _, f := range []string{image, image + "-wal", image + "-shm"} {
		if _, err := os.Stat(f); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s after the drop: %v, want gone", f, err)
		}
	}
	if _, _, err := DryRunImage(ctx, filepath.Join(t.TempDir(), "missing", "x.db")); err == nil || !strings.HasPrefix(err.Error(), "prune --dry-run: ") {
		t.Errorf("an image of no database: %v, want the dry run's error", err)
	}
}

package store_test

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/internal/rig/storetest"
	"github.com/ingestworks/ingest/store"
	"github.com/jackc/pgx/v5/pgconn"
)

// TestAFullDiskIsSaidOnEveryPath: SQLite's "database or disk is full", met
// by whichever part writes the file and wrapped by each layer above it,
// reads as the docs say a full disk (the database, its room, the fix),
// keeps the path of layers and what the driver said, and matches
// ingest.ErrDiskFull; PostgreSQL's disk_full the same, naming the
// server; anything else, and an error that says so already, unchanged.
func TestAFullDiskIsSaidOnEveryPath(t *testing.T) {
	db := storetest.Open(t)
	driver := storetest.DiskFull(t, db)
	for _, c := range []struct{ name, prefix string }{
		{"the store", "store page 1: save US page 1 of run 41: "},
		{"the embedded limiter", "categories: fetch IN videoCategories.list: limiter: "},
		{"the ledger", "record call: ledger: "},
		{"the API's counts", "api: count: "},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := db.Full(fmt.Errorf("%s%w", c.prefix, driver))
			if !errors.Is(err, ingest.ErrDiskFull) {
				t.Fatalf("%v: does not match ingest.ErrDiskFull", err)
			}
			if !errors.Is(err, driver) {
				t.Errorf("%v: SQLite's own error is not kept beneath", err)
			}
			want := c.prefix + db.Path() + ": the disk is full: SQLite could not write ("
			if msg := err.Error(); !strings.HasPrefix(msg, want) || !strings.Contains(msg, " in "+filepath.Dir(db.Path())) ||
				!strings.Contains(msg, "free space there or move the database to a larger disk") {
				t.Errorf("got %q, want it to start %q and name the directory and the fix", msg, want)
			}
		})
	}
	t.Run("PostgreSQL's disk_full", func(t *testing.T) {
		pg := &pgconn.PgError{Code: "53100", Message: "could not extend file"}
		err := store.Full("postgres://ingest@db/ingest", fmt.Errorf("ledger: record: %w", pg))
		if !errors.Is(err, ingest.ErrDiskFull) || !errors.Is(err, pg) {
			t.Fatalf("%v: does not match ingest.ErrDiskFull with the server's error beneath", err)
		}
		if want := "ledger: record: postgres://ingest@db/ingest: the disk is full: the PostgreSQL server could not write"; !strings.HasPrefix(err.Error(), want) {
			t.Errorf("got %q, want it to start %q", err, want)
		}
	})
	t.Run("anything else", func(t *testing.T) {
		for _, err := range []error{
			errors.New("dial tcp: connection refused"),
			&pgconn.PgError{Code: "53200", Message: "out of memory"},
			&store.DiskFullError{Path: "x.db", Dir: ".", Free: 0, Day: -1},
		} {
			if got := db.Full(err); got != err {
				t.Errorf("%v: became %v", err, got)
			}
		}
	})
}

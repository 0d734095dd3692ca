package store

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/ingestworks/ingest"
	"github.com/jackc/pgx/v5/pgconn"
	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// RoomPerCall is the free space a run wants in the database's directory
// before it spends a unit on a call: room for the page the call brings,
// its index entries, and the frames the write-ahead log takes for them,
// with a margin.
const RoomPerCall = 4 << 20

// DiskFullError is a database whose file system has no room left for what
// a run would store. It matches ingest.ErrDiskFull.
type DiskFullError struct {
	Path string
	Dir  string
	Free int64 // bytes this user may still write in Dir; -1 unknown
	// Write is set when SQLite found the disk full at a write, rather than
	// Room before a call: the call whose page it was writing was spent.
	Write bool
	// Day is what the last day stored, when check measured the room a day
	// needs (Day and RoomPerCall); -1 when it did not.
	Day int64
	// Server is set when a PostgreSQL server said its disk is full: Path is
	// its URL without the password, and the room is the server's to give.
	Server bool
}

func (e *DiskFullError) Error() string {
	free := "free space unknown"
	if e.Free >= 0 {
		free = Bytes(e.Free) + " free"
	}
	if e.Day >= 0 {
		return fmt.Sprintf("%s: %s free in %s, less than a day needs (%s: what the last day stored, and %s kept free before each call): "+
			"free space there or move the database to a larger disk before the next run", e.Path, Bytes(e.Free), e.Dir, Bytes(e.Day+RoomPerCall), Bytes(RoomPerCall))
	}
	if e.Server {
		return fmt.Sprintf("%s: the disk is full: the PostgreSQL server could not write: "+
			"free space on the server's data directory (or grow its volume), then run again", e.Path)
	}
	if e.Write {
		return fmt.Sprintf("%s: the disk is full: SQLite could not write (%s in %s): "+
			"free space there or move the database to a larger disk, then run again", e.Path, free, e.Dir)
	}
	return fmt.Sprintf("%s: the disk is full (%s in %s, a run keeps %s free before each call): "+
		"free space there or move the database to a larger disk, then run again; nothing more was spent",
		e.Path, free, e.Dir, Bytes(RoomPerCall))
}

// Is makes a DiskFullError match ingest.ErrDiskFull.
func (e *DiskFullError) Is(target error) bool { return target == ingest.ErrDiskFull }

// Room says whether the database has room for what one more call brings:
// nil, or a DiskFullError. A database on PostgreSQL has its server's
// room, which this host cannot see: always nil.
func (db *DB) Room(context.Context) error {
	if IsURL(db.path) {
		return nil
	}
	free, err := FreeBytes(db.path)
	if err != nil || free >= RoomPerCall {
		return nil
	}
	return &DiskFullError{Path: db.path, Dir: filepath.Dir(db.path), Free: free, Day: -1}
}

// full turns SQLite's "database or disk is full" into a DiskFullError,
// and a damaged page into the damaged file's PathError, keeping what SQLite
// said; any other err is returned as it is.
func (db *DB) full(err error) error {
	var se *sqlite.Error
	if err != nil && !IsURL(db.path) && errors.As(err, &se) && Damaged(err) {
		return fmt.Errorf("%w (%v)", damaged(db.path, "SQLite cannot read its pages"), err)
	}
	return Full(db.path, err)
}

// Full is err said the one way docs/operations/faults.md gives a full disk, when
// it is the database's word for one, whichever part met it: the store, the
// ledger, the embedded limiter, the API's counts. SQLite's "database or
// disk is full" and PostgreSQL's disk_full become a DiskFullError naming
// path (the database as its settings name it), what the driver said kept
// beneath; an err that already says so, or says anything else, is returned
// as it is. The disk is classified here once, so that every path that
// meets it reads the same to an operator grepping for it.
func (db *DB) Full(err error) error {
	if db == nil {
		return err
	}
	return Full(db.path, err)
}

// Full is DB.Full for the database at path, for a command that meets
// the error without the store in hand.
func Full(path string, err error) error {
	if err == nil || errors.Is(err, ingest.ErrDiskFull) {
		return err
	}
	var se *sqlite.Error
	if errors.As(err, &se) && se.Code()&0xff == sqlite3.SQLITE_FULL {
		free, ferr := FreeBytes(path)
		if ferr != nil {
			free = -1
		}
		return sayFull(err, se, DiskFullError{Path: path, Dir: filepath.Dir(path), Free: free, Write: true, Day: -1})
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) && pe.Code == pgDiskFull {
		return sayFull(err, pe, DiskFullError{Path: path, Free: -1, Write: true, Day: -1, Server: true})
	}
	return err
}

// sayFull is err, the path of layers that met the driver's full disk, with
// the driver's words said as d says them: "categories: fetch IN
// videoCategories.list: limiter: DB: the disk is full: ...".
func sayFull(err, driver error, d DiskFullError) error {
	said := &diskFull{d, err}
	msg, words := err.Error(), driver.Error()
	switch {
	case err == driver:
		return said
	case strings.Contains(msg, words):
		return &pathOf{strings.Replace(msg, words, said.Error(), 1), said}
	}
	return &pathOf{msg + ": " + said.Error(), said}
}

// pathOf is an error read as the path of layers that met it, with what
// it is beneath.
type pathOf struct {
	msg string
	err error
}

func (e *pathOf) Error() string { return e.msg }
func (e *pathOf) Unwrap() error { return e.err }

// pgDiskFull is PostgreSQL's SQLSTATE for a write its disk had no room
// for (class 53, insufficient resources).
const pgDiskFull = "53100"

// diskFull is a DiskFullError found by the database at a write, what the
// driver said kept beneath it.
type diskFull struct {
	DiskFullError
	driver error
}

func (e *diskFull) Unwrap() error { return e.driver }

// Bytes says a size in the unit an operator reads at a glance.
func Bytes(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.0f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d bytes", n)
}

package store

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"

	"github.com/ingestworks/ingest"
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
	if err == nil || IsURL(db.path) || !errors.As(err, &se) {
		return err
	}
	switch se.Code() & 0xff {
	case sqlite3.SQLITE_CORRUPT, sqlite3.SQLITE_NOTADB:
		return fmt.Errorf("%w (%v)", damaged(db.path, "SQLite cannot read its pages"), err)
	case sqlite3.SQLITE_FULL:
	default:
		return err
	}
	free, ferr := FreeBytes(db.path)
	if ferr != nil {
		free = -1
	}
	return &diskFull{DiskFullError{Path: db.path, Dir: filepath.Dir(db.path), Free: free, Write: true, Day: -1}, err}
}

// diskFull is a DiskFullError found by SQLite at a write.
type diskFull struct {
	DiskFullError
	sqlite error
}

func (e *diskFull) Unwrap() error { return e.sqlite }

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

package store

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/ingestworks/ingest"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// ErrUnusablePath: the database's path cannot be used as it is (a missing
// directory, a file that is not a database, a directory this user cannot
// write). Match it with errors.Is; the PathError says what to do. Nothing
// was changed.
var ErrUnusablePath = errors.New("unusable database path")

// PathError is a database path that cannot be used, with the fix.
type PathError struct {
	Path    string
	Problem string
	Fix     string
}

func (e *PathError) Error() string { return e.Path + " " + e.Problem + ": " + e.Fix }

// Is makes a PathError match ErrUnusablePath.
func (e *PathError) Is(target error) bool { return target == ErrUnusablePath }

// sqliteMagic opens every SQLite database file.
var sqliteMagic = []byte("SQLite format 3\x00")

// CheckPath finds what SQLite would report in its own words (unable to
// open database file, file is not a database, attempt to write a readonly
// database), before SQLite touches anything: write says the caller will
// create or change the database.
func CheckPath(path string, write bool) error {
	st, err := os.Stat(path)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return checkDir(path, write)
	case err != nil:
		return &PathError{path, "cannot be read (" + errText(err) + ")", "give this user access to it, or use another path"}
	case st.IsDir():
		return &PathError{path, "is a directory", "name a file in it, such as " + filepath.Join(path, "ingest.db")}
	}
	if err := checkMagic(path); err != nil {
		return err
	}
	if !write {
		return nil
	}
	if err := writable(path); err != nil {
		if readOnlyFS(err) {
			return &PathError{path, "is on a read-only file system", "mount " + filepath.Dir(path) + " read-write, or use another path (report, search and export read it as it is)"}
		}
		return &PathError{path, "is read-only to this user", "make it writable (chown or chmod), or use another path"}
	}
	return checkDir(path, write)
}

// checkDir: the directory must exist, and to write, take the files SQLite
// keeps beside the database (-wal, -shm).
func checkDir(path string, write bool) error {
	dir := filepath.Dir(path)
	st, err := os.Stat(dir)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return &PathError{path, "cannot be created: the directory " + dir + " does not exist", "create it (mkdir -p " + dir + "), or use another path"}
	case err != nil:
		return &PathError{path, "cannot be opened: the directory " + dir + " cannot be read (" + errText(err) + ")", "give this user access to it, or use another path"}
	case !st.IsDir():
		return &PathError{path, "cannot be opened: " + dir + " is not a directory", "use a path inside a directory"}
	}
	if _, err := os.Stat(path); write && readOnlyFS(writable(dir)) {
		return &PathError{path, "cannot be written: " + dir + " is on a read-only file system", "mount it read-write, or use another path"}
	} else if write && writable(dir) != nil {
		what := "the database"
		if err == nil {
			what = "the database's -wal and -shm files"
		}
		return &PathError{path, "cannot be written: the directory " + dir + " is not writable by this user", "SQLite creates " + what +
			" there: make it writable (chown or chmod), or use another path"}
	}
	return nil
}

// checkMagic: a file that is not empty must start as a SQLite database.
func checkMagic(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return &PathError{path, "cannot be read (" + errText(err) + ")", "give this user access to it, or use another path"}
	}
	defer f.Close()
	head := make([]byte, len(sqliteMagic))
	n, err := io.ReadFull(f, head)
	if n == 0 || bytes.Equal(head, sqliteMagic) {
		return nil
	}
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) {
		return fmt.Errorf("read %s: %w", path, err)
	}
	return &PathError{path, "is not an SQLite database", "name ingest's database, or move this file away and let the first run create one"}
}

// fileError is what SQLite said when it opened or first read the file at
// path, as a PathError when the file, not the program, is at fault: a
// database whose pages are damaged (a copy cut short, a disk that lost
// writes), or a path SQLite cannot open although the checks before it
// passed (a file system such as /proc that holds no ordinary files).
// Anything else is err unchanged.
func fileError(path string, err error) error {
	var se *sqlite.Error
	if !errors.As(err, &se) {
		return err
	}
	switch se.Code() & 0xff {
	case sqlite3.SQLITE_CORRUPT, sqlite3.SQLITE_NOTADB:
		return damaged(path, "SQLite cannot read its pages")
	case sqlite3.SQLITE_FULL:
		free, ferr := FreeBytes(path)
		if ferr != nil {
			free = -1
		}
		return &DiskFullError{Path: path, Dir: filepath.Dir(path), Free: free, Write: true, Day: -1}
	case sqlite3.SQLITE_CANTOPEN:
		return &PathError{path, "cannot be opened by SQLite (is it on a file system that holds ordinary files, such as /proc is not?)",
			"use another path, on a local writable file system"}
	}
	return err
}

// Damaged says whether err is SQLite's word for a damaged file, met at
// any read or write; the error does not say which file.
func Damaged(err error) bool {
	var se *sqlite.Error
	if !errors.As(err, &se) {
		return false
	}
	code := se.Code() & 0xff
	return code == sqlite3.SQLITE_CORRUPT || code == sqlite3.SQLITE_NOTADB
}

// Refused says whether err is SQLite refusing a row for the schema's
// constraints (a key, NOT NULL, a foreign key, a CHECK): the row, not the
// database, is at fault.
func Refused(err error) bool {
	var se *sqlite.Error
	if !errors.As(err, &se) {
		return false
	}
	code := se.Code() & 0xff
	return code == sqlite3.SQLITE_CONSTRAINT || code == sqlite3.SQLITE_MISMATCH || code == sqlite3.SQLITE_TOOBIG
}

// DamagedFix is what to do with a damaged database file.
const DamagedFix = "restore it from a backup (docs/operations/backups.md); without one, salvage the rows that still read into a new file with " +
	"`ingest db recover --db PATH --out NEW.db` (ingest db copy reads every page and refuses a damaged file), " +
	"or move it and its -wal file away and let the next run create a new one"

// damaged is the PathError of a damaged file, matching ingest.ErrDamaged.
func damaged(path, found string) error {
	return &damagedError{PathError{path, "is damaged: " + found, strings.ReplaceAll(DamagedFix, "PATH", path)}}
}

type damagedError struct{ PathError }

// Is matches both ErrUnusablePath and ingest.ErrDamaged.
func (e *damagedError) Is(target error) bool {
	return target == ErrUnusablePath || target == ingest.ErrDamaged
}

// As lets errors.As find the PathError.
func (e *damagedError) As(target any) bool {
	if pe, ok := target.(**PathError); ok {
		*pe = &e.PathError
		return true
	}
	return false
}

// errText is err without the path os already put in it.
func errText(err error) string {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}

// Package store is ingest's database, on SQLite or PostgreSQL: the latest
// metadata of every video with a full-text index over its text, the
// trending entries and search results of every run, the runs themselves,
// categories and backfill cursors, and the mark each cache in front of the
// readers' site was purged up to (purged.go); the quota ledger in it is package
// ledger's, and a copy of it into another database package dbcopy's.
//
// The SQL both databases share is written once; what differs (upserts,
// the search index, retention) sits behind dialect (dialect.go): each
// statement whose text differs is written for each database, side by
// side, in the file of its concern. The schema is built by numbered files,
// one sequence per database (migrations/sqlite, migrations/postgres),
// applied by Migrate; schema.sql and schema.postgres.sql at the top show
// what they build. SQLite
// allows one writer at a time, so writes go through a pool of exactly one
// connection (shared with the embedded quota limiter through Writer), and
// reads through a separate, bounded, query-only pool; WAL lets them run side
// by side. Every page is stored in one transaction, so a crash leaves the
// database whole, and the FTS index is kept in sync by triggers, so no
// writer can forget it.
//
// What is where: sQLite or PostgreSQL: opening (store.Open, the one open; a
// SQLite file's consistent copy for a database copy, Snapshot), numbered
// migrations per database (store/migrations/sqlite,
// store/migrations/postgres; a test checks that an upgraded database and a
// new one have the same schema, and that the top-level schema.sql and
// schema.postgres.sql, where a reader sees each database's whole schema, are
// what the migrations build), the SQL both share written once and what
// differs behind one dialect (store/dialect.go: both databases' ways side by
// side, and the statements whose text differs gathered by concern, each
// written for each database side by side in its concern's file: a page's in
// pages.go, a search's in search.go, a chart's in chart.go, a video's counts
// in history.go, tracked counts in stats.go, category names in
// categories.go, the export's in export.go), pages and the search index
// (PostgreSQL's words, pgsearch.go), runs, cursors, report queries; the
// database's size and how far back its data reaches (size.go); when each
// entry of a chart's run last changed, walking its earlier runs back
// (steady.go); the videos to fetch again, refreshed, and found gone
// (videos.go); the schema step a write checks on a shared PostgreSQL
// (upgrade.go), and the runs stopped when it refuses one (outdated.go);
// PostgreSQL's connections tell a silence bound each reply
// they read (pgdriver.go).
package store

import (
	"bufio"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"runtime"
	"strings"
	"sync"
	"time"

	_ "modernc.org/sqlite" // registers the "sqlite" driver

	"github.com/ingestworks/ingest"
)

// Errors returned by the store. Match them with errors.Is.
var (
	// ErrNoDatabase: a read-only command found no database file.
	ErrNoDatabase = errors.New("no database: run `ingest run` or `ingest backfill` first, or point --db/INGEST_DB at the database")
	// ErrBadQuery: a search query has nothing that can be searched for.
	ErrBadQuery = errors.New("bad search query")
)

// driverName is the database/sql driver the store opens: modernc's; the
// query-plan test swaps in a wrapper that records every statement.
var driverName = "sqlite"

// DB is the open database.
type DB struct {
	path string      // a file, or a PostgreSQL URL without its password
	d    dialect     // sqliteDialect, or pgDialect (pg.go)
	q    *dialectSQL // d's text of the statements that differ
	w    *sql.DB     // one connection: SQLite has one writer
	r    *sql.DB     // bounded, query_only
	// readOnly: a SQLite file OpenExisting opened, whose writes fail.
	readOnly bool
	st       *statements
	// markMu guards mark, DataMark's statement, prepared on r at its
	// first read (markStmt).
	markMu sync.Mutex
	mark   *sql.Stmt
	// rankWindow is RankWindow; tests make it small.
	rankWindow int
}

// Open opens the database at path, creating it if it is missing, and brings
// its schema up to date. A path SQLite cannot use is a PathError, found
// before anything is created or changed.
func Open(ctx context.Context, path string) (*DB, error) {
	if IsURL(path) {
		return openPostgres(ctx, path, true)
	}
	if err := CheckPath(path, true); err != nil {
		return nil, err
	}
	if err := notNewer(ctx, path); err != nil {
		return nil, err
	}
	w, err := sql.Open(driverName, DSN(path, false))
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	w.SetMaxOpenConns(1)
	w.SetMaxIdleConns(1)
	w.SetConnMaxIdleTime(0)
	if err := migrate(ctx, w); err != nil {
		w.Close()
		var ve *VersionError
		if errors.As(err, &ve) {
			ve.Path = path
			return nil, ve
		}
		return nil, fmt.Errorf("open %s: %w", path, fileError(path, err))
	}
	if err := writerTemp(ctx, w); err != nil {
		w.Close()
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	db := &DB{path: path, w: w, r: openReader(path), d: sqliteDialect{}, q: sqliteSQL, rankWindow: RankWindow}
	// A connection that read the schema before another process migrated
	// the file can fail its first prepare on the changed schema
	// (SQLITE_SCHEMA); the next prepare reads it anew.
	for attempt := 0; ; attempt++ {
		if db.st, err = prepare(ctx, w, db.q); err == nil || attempt == 2 || !strings.Contains(err.Error(), "schema has changed") {
			break
		}
	}
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	return db, nil
}

// writerTemp keeps the writer's temporary files in memory once the schema
// is up to date. Inside a transaction every statement that writes many
// rows (a page's upserts, its entries) journals the pages it changes so
// that it alone can be undone, and SQLite moves that journal to a file of
// its own once it outgrows a few pages: a file created, written and
// deleted for each statement of each page stored. In memory it holds no
// more than the pages one statement changes. It is set after the
// migrations, whose index builds sort a whole table through temporary
// files, and the writer keeps its one connection open, so the setting
// stays with it (the prune sets it too, and puts back what it found).
func writerTemp(ctx context.Context, w *sql.DB) error {
	if _, err := w.ExecContext(ctx, `PRAGMA temp_store = MEMORY`); err != nil {
		return fmt.Errorf("writer settings: %w", err)
	}
	return nil
}

// migrate runs Migrate, retrying while another process holds the
// database during its own first start (switching a new file to WAL can
// report SQLITE_BUSY without waiting on the busy handler).
func migrate(ctx context.Context, w *sql.DB) error {
	var err error
	for attempt := 0; attempt < 50; attempt++ {
		if err = Migrate(ctx, w); err == nil || !isBusy(err) {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-ingest.After(time.Duration(10+attempt*10) * time.Millisecond):
		}
	}
	return err
}

// notNewer refuses a database of a later schema before it is opened for
// writing, which would switch it to WAL: this binary changes nothing in it.
func notNewer(ctx context.Context, path string) error {
	if _, err := os.Stat(path); err != nil {
		return nil // a new file: created at the current version
	}
	r, v, err := openReadOnly(ctx, path, false)
	if err != nil {
		return nil // the writer says why, with the path
	}
	r.Close()
	if v > SchemaVersion {
		return &VersionError{Path: path, Have: v, Want: SchemaVersion}
	}
	return nil
}

func isBusy(err error) bool {
	s := err.Error()
	return strings.Contains(s, "SQLITE_BUSY") || strings.Contains(s, "database is locked")
}

func openReader(path string) *sql.DB {
	r, _ := sql.Open(driverName, DSN(path, true)) // sql.Open only parses
	n := max(4, runtime.NumCPU())
	r.SetMaxOpenConns(n)
	r.SetMaxIdleConns(n)
	return r
}

// OpenExisting opens the database at path for reading only, for commands
// that must not create or change it (report, search). It returns an error
// wrapping ErrNoDatabase when there is no file at path.
//
// It opens with mode=ro, which still needs the WAL's shared-memory file; in
// a directory it cannot write, where no writer can be running either, it
// opens the file as immutable instead.
func OpenExisting(ctx context.Context, path string) (*DB, error) {
	if IsURL(path) {
		return openPostgres(ctx, path, false)
	}
	if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("open %s: %w", path, ErrNoDatabase)
	} else if err != nil {
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	if err := CheckPath(path, false); err != nil {
		return nil, err
	}
	r, v, err := openReadOnly(ctx, path, false)
	if err != nil {
		r, v, err = openReadOnly(ctx, path, true)
	}
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", path, fileError(path, err))
	}
	if v != SchemaVersion {
		r.Close()
		return nil, &VersionError{Path: path, Have: v, Want: SchemaVersion}
	}
	// Writes through a read-only DB fail in SQLite with a clear error
	// instead of a nil pool.
	return &DB{path: path, w: r, r: r, readOnly: true, d: sqliteDialect{}, q: sqliteSQL, rankWindow: RankWindow}, nil
}

// OpenDamaged opens the SQLite file at path to read it as it is, pages and
// all (ingest db recover): read-only, with none of the checks of its
// schema or its pages a damaged file would fail. A file that is not a
// SQLite database is a PathError.
func OpenDamaged(ctx context.Context, path string) (*sql.DB, error) {
	if err := CheckPath(path, false); err != nil {
		return nil, err
	}
	var err error
	for _, immutable := range []bool{false, true} {
		var r *sql.DB
		if r, _, err = openReadOnly(ctx, path, immutable); err == nil {
			r.SetMaxOpenConns(1)
			return r, nil
		}
	}
	if Damaged(err) {
		return nil, &PathError{path, "is not a SQLite database: " + err.Error(), "point --db / INGEST_DB at the damaged database file"}
	}
	return nil, fmt.Errorf("open %s: %w", path, fileError(path, err))
}

// Snapshot copies the SQLite database at path into into with VACUUM INTO:
// one consistent, compacted copy of a file that a worker may be writing,
// read through a connection that changes nothing (what `ingest db copy`
// reads). It is written beside into and renamed when whole, so a file at
// into is always a whole one.
func Snapshot(ctx context.Context, path, into string) error {
	r, err := sql.Open(driverName, "file:"+path+"?mode=ro&_pragma=busy_timeout(10000)")
	if err != nil {
		return fmt.Errorf("snapshot %s: %w", path, err)
	}
	defer r.Close()
	part := into + ".part"
	os.Remove(part)
	if _, err := r.ExecContext(ctx, `VACUUM INTO ?`, part); err != nil {
		return fmt.Errorf("snapshot %s: %w", path, err)
	}
	if err := os.Rename(part, into); err != nil {
		return fmt.Errorf("snapshot %s: %w", path, err)
	}
	return nil
}

// Image copies the SQLite database at path into into page for page, as
// one read of it sees it (the WAL's frames included): the same pages, the
// free ones and their order too, where Snapshot compacts them, so that a
// prune of the image frees what a prune of the file would (prune
// --dry-run). It is written beside into and renamed when whole.
func Image(ctx context.Context, path, into string) error {
	r, err := sql.Open(driverName, "file:"+path+"?mode=ro&_pragma=busy_timeout(10000)")
	if err != nil {
		return fmt.Errorf("image %s: %w", path, err)
	}
	defer r.Close()
	part := into + ".part"
	os.Remove(part)
	if err := writeImage(ctx, r, part); err != nil {
		os.Remove(part)
		return fmt.Errorf("image %s: %w", path, err)
	}
	if err := os.Rename(part, into); err != nil {
		return fmt.Errorf("image %s: %w", path, err)
	}
	return nil
}

// writeImage writes every page r reads, in one transaction, into the file
// at to.
func writeImage(ctx context.Context, r *sql.DB, to string) error {
	tx, err := r.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return err
	}
	defer tx.Rollback()
	rows, err := tx.QueryContext(ctx, `SELECT data FROM sqlite_dbpage ORDER BY pgno`)
	if err != nil {
		return err
	}
	defer rows.Close()
	f, err := os.OpenFile(to, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	defer f.Close()
	w := bufio.NewWriterSize(f, 1<<20)
	for rows.Next() {
		var page []byte
		if err := rows.Scan(&page); err != nil {
			return err
		}
		if _, err := w.Write(page); err != nil {
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return err
	}
	if err := w.Flush(); err != nil {
		return err
	}
	return f.Sync()
}

func openReadOnly(ctx context.Context, path string, immutable bool) (*sql.DB, int, error) {
	r, err := sql.Open(driverName, ReadOnlyDSN(path, immutable))
	if err != nil {
		return nil, 0, err
	}
	n := max(4, runtime.NumCPU())
	r.SetMaxOpenConns(n)
	r.SetMaxIdleConns(n)
	var v int
	if err := r.QueryRowContext(ctx, "PRAGMA user_version").Scan(&v); err != nil {
		r.Close()
		return nil, 0, err
	}
	return r, v, nil
}

// Close closes both pools.
func (db *DB) Close() error {
	if db.st != nil {
		db.st.close()
	}
	db.markMu.Lock()
	if db.mark != nil {
		db.mark.Close()
		db.mark = nil
	}
	db.markMu.Unlock()
	err := db.w.Close()
	if db.r != db.w {
		err = errors.Join(err, db.r.Close())
	}
	return err
}

// Writer returns the write pool (one connection), for the embedded quota
// limiter to share: SQLite has one writer, so everything that writes must
// queue on the same connection instead of waiting on file locks.
func (db *DB) Writer() *sql.DB { return db.w }

// Reader returns the query-only read pool.
func (db *DB) Reader() *sql.DB { return db.r }

// Path returns the file the database lives in.
func (db *DB) Path() string { return db.path }

// Writable says whether the database takes a write now: it begins an
// immediate transaction and rolls it back (for /readyz).
func (db *DB) Writable(ctx context.Context) error {
	return db.d.writable(ctx, db)
}

// ReadOnly says whether the database was opened read-only (a SQLite file
// OpenExisting opened): every write fails, so what a process would share
// through it (the site's sessions) stays in the process.
func (db *DB) ReadOnly() bool { return db.readOnly }

// Postgres says whether the database is PostgreSQL, rather than a SQLite
// file.
func (db *DB) Postgres() bool {
	_, ok := db.d.(pgDialect)
	return ok
}

// Update runs fn in one write transaction, as inTx does, for the ledger's
// and retention's writes that must be one step.
func (db *DB) Update(ctx context.Context, fn func(*sql.Tx) error) error { return db.inTx(ctx, fn) }

// inTx runs fn in one immediate write transaction. On PostgreSQL, where
// hosts write at once, a transaction that lost a deadlock is run again.
func (db *DB) inTx(ctx context.Context, fn func(*sql.Tx) error) error {
	err := db.tx(ctx, fn)
	for try := 0; db.d.retryable(err) && try < 5; try++ {
		err = db.tx(ctx, fn)
	}
	return err
}

func (db *DB) tx(ctx context.Context, fn func(*sql.Tx) error) error {
	return db.full(db.write(ctx, fn))
}

func (db *DB) write(ctx context.Context, fn func(*sql.Tx) error) error {
	tx, err := db.w.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if err := db.d.guard(ctx, tx, db.path); err != nil {
		return err
	}
	if err := fn(tx); err != nil {
		return err
	}
	return tx.Commit()
}

func msOf(t time.Time) int64 { return t.UnixMilli() }

// nullMS stores the zero time as NULL.
func nullMS(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return t.UnixMilli()
}

func timeOf(ms sql.NullInt64) time.Time {
	if !ms.Valid {
		return time.Time{}
	}
	return time.UnixMilli(ms.Int64).UTC()
}

// Version reads the schema version of the database at path without
// changing it.
func Version(ctx context.Context, path string) (int, error) {
	db, err := OpenExisting(ctx, path)
	if err == nil {
		db.Close()
		return SchemaVersion, nil
	}
	var ve *VersionError
	if errors.As(err, &ve) {
		return ve.Have, nil
	}
	return 0, err
}

// VersionError: the database has another schema version than this binary
// writes.
type VersionError struct {
	Path       string
	Have, Want int
}

func (e *VersionError) Error() string {
	if e.Have > e.Want {
		return fmt.Sprintf("%s: schema version %d is newer than this binary's %d: upgrade ingest, or use another path", e.Path, e.Have, e.Want)
	}
	return fmt.Sprintf("%s: schema version %d, this binary reads %d: run `ingest db migrate` to upgrade it (docs/operations.md, Upgrades)", e.Path, e.Have, e.Want)
}

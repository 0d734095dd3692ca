package store

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"path"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/ingestworks/ingest"
)

// migrationFiles are the schema's steps, one numbered file each, one
// sequence per database (migrations/sqlite, migrations/postgres): file N
// takes a database from version N-1 to N, and a new database runs them
// all. A released file never changes; a change to the schema is a new
// file. The schema is what the sequence builds; no copy is kept beside it.
//
//go:embed migrations/sqlite/*.sql migrations/postgres/*.sql
var migrationFiles embed.FS

// migration is one numbered file; hook, when set, is the Go a step needs
// beside its SQL: it runs the file's statements (apply) when it sees fit.
type migration struct {
	version int
	name    string // the file's path under migrations/
	sql     string
	hook    func(ctx context.Context, tx *sql.Tx, apply func() error) error
}

// The sequences. SchemaVersion is the PRAGMA user_version of a SQLite
// database this binary writes; PGSchemaVersion the step of a PostgreSQL one.
var (
	sqliteMigrations = loadMigrations("sqlite", sqliteHooks)
	pgMigrations     = loadMigrations("postgres", nil)
	SchemaVersion    = len(sqliteMigrations)
	PGSchemaVersion  = len(pgMigrations)
)

// loadMigrations reads dir's files in order. A gap or a duplicate in the
// numbers, or a hook without its file, is a mistake in the source tree:
// it panics as the binary starts, so that no test passes beside it.
func loadMigrations(dir string, hooks map[int]func(context.Context, *sql.Tx, func() error) error) []migration {
	names, err := fs.Glob(migrationFiles, path.Join("migrations", dir, "*.sql"))
	if err != nil {
		panic(err)
	}
	var ms []migration
	for i, name := range names { // fs.Glob sorts
		base := path.Base(name)
		n, err := strconv.Atoi(strings.SplitN(base, "_", 2)[0])
		if err != nil || n != i+1 {
			panic(fmt.Sprintf("store: migration %s is not numbered %04d", name, i+1))
		}
		text, _ := migrationFiles.ReadFile(name)
		ms = append(ms, migration{version: n, name: path.Join(dir, base), sql: string(text), hook: hooks[n]})
	}
	for n := range hooks {
		if n < 1 || n > len(ms) {
			panic(fmt.Sprintf("store: a hook for %s migration %d, which has no file", dir, n))
		}
	}
	return ms
}

// apply runs the step in tx. A new database (fresh) gets the file's SQL
// alone: a hook computes over rows, and it has none.
func (m migration) apply(ctx context.Context, tx *sql.Tx, fresh bool) error {
	if !fresh {
		defer m.sayWhileRunning(ctx)()
	}
	run := func() error {
		_, err := tx.ExecContext(ctx, m.sql)
		return err
	}
	var err error
	if m.hook != nil && !fresh {
		err = m.hook(ctx, tx, run)
	} else {
		err = run()
	}
	if err != nil {
		return fmt.Errorf("migrate: %s: %w", m.name, err)
	}
	return nil
}

// upgradeBeat is how often a step still at work says so. An upgrade
// rewrites tables whose size grows with the days kept, which can take
// minutes on a newer binary's first open; a daemon that no terminal
// watches must not look hung meanwhile, nor be stopped as one.
var upgradeBeat = 10 * time.Second

// sayWhileRunning logs, every upgradeBeat until the returned stop is
// called, that step m is still being applied and how long it has run. A
// step quicker than one beat says nothing.
func (m migration) sayWhileRunning(ctx context.Context) (stop func()) {
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		beat := ingest.NewTicker(upgradeBeat)
		defer beat.Stop()
		var elapsed time.Duration // counted in beats: the store reads no clock
		for {
			select {
			case <-done:
				return
			case <-beat.C:
				elapsed += upgradeBeat
				slog.Default().InfoContext(ctx, "store: upgrading the database; stopping now leaves it as it was",
					"step", m.name, "elapsed", elapsed.Round(time.Second))
			}
		}
	})
	return func() { close(done); wg.Wait() }
}

// Migrate brings the database to SchemaVersion inside one immediate
// transaction, so that concurrent processes upgrade it once and a failure
// leaves it as it was: every numbered file of migrations/sqlite it lacks
// is applied in order, a new database's from the first.
func Migrate(ctx context.Context, db *sql.DB) error {
	if err := incrementalVacuum(ctx, db); err != nil {
		return err
	}
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	defer tx.Rollback()
	var v int
	if err := tx.QueryRowContext(ctx, "PRAGMA user_version").Scan(&v); err != nil {
		return fmt.Errorf("migrate: read user_version: %w", err)
	}
	switch {
	case v == SchemaVersion:
		return nil
	case v > SchemaVersion:
		return &VersionError{Have: v, Want: SchemaVersion}
	}
	var done []applied
	for _, m := range sqliteMigrations[v:] {
		a, err := m.timed(ctx, tx, v == 0)
		if err != nil {
			return err
		}
		done = append(done, a)
	}
	if _, err := tx.ExecContext(ctx, fmt.Sprintf("PRAGMA user_version = %d", SchemaVersion)); err != nil {
		return fmt.Errorf("migrate: set user_version: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return err
	}
	logApplied(ctx, "sqlite", v, done)
	return nil
}

// applied is a step a migration ran, and how long it took.
type applied struct {
	m    migration
	took time.Duration
}

// timed is apply, and how long it took: a span on the host's monotonic
// clock, not a reading of the house clock, which a rehearsal may offset.
func (m migration) timed(ctx context.Context, tx *sql.Tx, fresh bool) (applied, error) {
	began := time.Now()
	err := m.apply(ctx, tx, fresh)
	return applied{m, time.Since(began)}, err
}

// logApplied says, once they are committed, the steps a migration
// applied: one line each on an existing database, from the step it was at
// to the step it is at, and how long the step took, so that an operator
// reads in the log what an upgrade did and what it cost. A new database
// (from 0) is one line at debug: nothing it held was changed.
func logApplied(ctx context.Context, database string, from int, steps []applied) {
	log := slog.Default()
	if from == 0 {
		var took time.Duration
		for _, a := range steps {
			took += a.took
		}
		log.DebugContext(ctx, "store: created the database's schema", "database", database,
			"to", from+len(steps), "took", took.Round(time.Millisecond))
		return
	}
	for _, a := range steps {
		log.InfoContext(ctx, "store: upgraded the database's schema one step", "database", database,
			"from", a.m.version-1, "to", a.m.version, "step", a.m.name, "took", a.took.Round(time.Millisecond))
	}
}

// Pending is what `ingest db migrate` would do to a database: the step it
// is at, this binary's, and the files of the steps between, in order.
type Pending struct {
	Have, Want int
	Steps      []string // each step's file under migrations/, as the log names it
}

// PendingSteps reads the schema step of the existing database at path
// (a SQLite file or a postgres:// URL) and the steps this binary would
// apply to it, changing nothing. A database that is not there, or holds
// no ingest schema, wraps ErrNoDatabase; one newer than this binary is a
// *VersionError.
func PendingSteps(ctx context.Context, path string) (Pending, error) {
	ms := sqliteMigrations
	if IsURL(path) {
		ms = pgMigrations
	}
	db, err := OpenExisting(ctx, path)
	if err == nil {
		db.Close()
		return Pending{Have: len(ms), Want: len(ms)}, nil
	}
	var ve *VersionError
	switch {
	case !errors.As(err, &ve) || ve.Have > ve.Want:
		return Pending{}, err
	case ve.Have == 0:
		return Pending{}, fmt.Errorf("open %s: %w", ve.Path, ErrNoDatabase)
	}
	p := Pending{Have: ve.Have, Want: ve.Want}
	for _, m := range ms[ve.Have:] {
		p.Steps = append(p.Steps, m.name)
	}
	return p, nil
}

// incrementalVacuum makes a new, empty database file one that retention can
// shrink (auto_vacuum INCREMENTAL). The mode is written into the file by a
// VACUUM, which costs nothing on an empty file; an older file keeps its
// mode (changing it would rewrite the whole file). It is done here, once,
// and not as a pragma in the DSN: there, every new connection would run it,
// and it waits for the write lock, busy_timeout long, whatever the
// caller's deadline.
func incrementalVacuum(ctx context.Context, db *sql.DB) error {
	var tables int
	if err := db.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_schema`).Scan(&tables); err != nil {
		return fmt.Errorf("migrate: read schema: %w", err)
	}
	if tables > 0 {
		return nil
	}
	conn, err := db.Conn(ctx)
	if err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	defer conn.Close()
	for _, q := range []string{`PRAGMA auto_vacuum = INCREMENTAL`, `VACUUM`} {
		if _, err := conn.ExecContext(ctx, q); err != nil {
			return fmt.Errorf("migrate: %s: %w", q, err)
		}
	}
	return nil
}

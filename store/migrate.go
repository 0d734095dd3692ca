package store

import (
	"context"
	"database/sql"
	"embed"
	"fmt"
	"io/fs"
	"path"
	"strconv"
	"strings"
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

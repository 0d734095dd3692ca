package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/ingestworks/ingest"
)

// dialect is what SQLite and PostgreSQL do each their own way. The store's
// methods hold the SQL both databases share, written once with ?
// placeholders (PostgreSQL's connections number them: pgdriver.go); a
// statement whose text differs is a field of dialectSQL, each database's
// text side by side in the file of its concern (pages.go, search.go...),
// and what differs beyond a statement's text is a method here.
type dialect interface {
	// match is a parsed search query as the dialect's index takes it: an
	// FTS5 expression, or a tsquery.
	match(pq parsedQuery) string
	// regionArg is a region as the search's region filter takes it.
	regionArg(region string) string
	// pageRows and statRows are a page's videos and tracking's counts as
	// the dialect's statements read them: SQLite's JSONB (jsonb.go),
	// PostgreSQL's JSON text, whose rows carry each video's words for the
	// index, which SQLite's triggers find themselves.
	pageRows(page ingest.Page) (any, error)
	statRows(stats []ingest.VideoStats) (any, error)
	// retryable says whether a transaction that failed with err is run
	// again.
	retryable(err error) bool
	// size and writable are Size and Writable.
	size(ctx context.Context, db *DB) (Size, error)
	writable(ctx context.Context, db *DB) error
	// server describes the database for `ingest check`.
	server(ctx context.Context, db *DB) (string, error)
	// guard refuses a write transaction on a database another host
	// migrated past this binary's schema (*VersionError), before it
	// writes anything the newer schema could misread.
	guard(ctx context.Context, tx *sql.Tx, path string) error
}

// dialectSQL holds each statement whose text differs between the
// databases, a part for each concern, declared in its file with each
// database's text side by side. The functions take what the shared code
// varies: the filters of a search, an export's WHERE clause.
type dialectSQL struct {
	pageStmts
	categoryStmts
	statsStmts
	chartStmts
	historyStmts
	searchStmts
	exportStmts
}

var (
	sqliteSQL = &dialectSQL{sqlitePageSQL, sqliteCategorySQL, sqliteStatsSQL, sqliteChartSQL, sqliteHistorySQL,
		sqliteSearchSQL, sqliteExportSQL}
	pgSQL = &dialectSQL{pgPageSQL, pgCategorySQL, pgStatsSQL, pgChartSQL, pgHistorySQL,
		pgSearchSQL, pgExportSQL}
)

// sqliteDialect is SQLite's: FTS5 kept by triggers, one writer, a file
// that retention shrinks by incremental vacuum.
type sqliteDialect struct{}

// pgDialect is PostgreSQL's: a tsvector index kept by the page's own
// statement, hosts that write at once, autovacuum instead of a file to
// shrink.
type pgDialect struct{}

func (sqliteDialect) match(pq parsedQuery) string { return pq.expr }
func (pgDialect) match(pq parsedQuery) string     { return pq.tsQuery() }

func (sqliteDialect) regionArg(region string) string { return region }
func (pgDialect) regionArg(region string) string     { return tsLexeme(region) }

func (sqliteDialect) pageRows(page ingest.Page) (any, error) { return pageJSONB(page) }
func (pgDialect) pageRows(page ingest.Page) (any, error)     { return pageJSON(page, true) }

func (sqliteDialect) statRows(stats []ingest.VideoStats) (any, error) { return statsJSONB(stats) }
func (pgDialect) statRows(stats []ingest.VideoStats) (any, error)     { return statsJSON(stats) }

func (sqliteDialect) retryable(error) bool { return false }
func (pgDialect) retryable(err error) bool { return retryable(err) }

func (sqliteDialect) size(ctx context.Context, db *DB) (Size, error) { return db.sqliteSize(ctx) }
func (pgDialect) size(ctx context.Context, db *DB) (Size, error)     { return db.pgSize(ctx) }

// writable begins an immediate transaction and rolls it back.
func (sqliteDialect) writable(ctx context.Context, db *DB) error {
	tx, err := db.w.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("database %s: %w", db.path, err)
	}
	return tx.Rollback()
}

// writable says whether the server takes writes now: it is not a standby
// in recovery, nor set read-only.
func (pgDialect) writable(ctx context.Context, db *DB) error {
	var ok bool
	err := db.w.QueryRowContext(ctx,
		`SELECT NOT pg_is_in_recovery() AND current_setting('transaction_read_only') = 'off'`).Scan(&ok)
	if err == nil && !ok {
		err = errors.New("the server takes no writes (a standby, or read-only)")
	}
	if err != nil {
		return fmt.Errorf("database %s: %w", db.path, err)
	}
	return nil
}

func (sqliteDialect) server(context.Context, *DB) (string, error) {
	return fmt.Sprintf("sqlite, schema version %d", SchemaVersion), nil
}

// server is PostgreSQL's version and the schema step.
func (pgDialect) server(ctx context.Context, db *DB) (string, error) {
	var v string
	if err := db.r.QueryRowContext(ctx, `SHOW server_version`).Scan(&v); err != nil {
		return "", err
	}
	return fmt.Sprintf("PostgreSQL %s, schema step %d", v, PGSchemaVersion), nil
}

package store

import (
	"context"
	"database/sql"
)

// dialect is what SQLite and PostgreSQL do each their own way. The store's
// methods hold the SQL both databases share, written once with ?
// placeholders (PostgreSQL's connections number them: pgdriver.go); a
// statement whose text differs is a field of dialectSQL, which each
// dialect fills with its own text (sqlite.go, pg_sql.go), and what differs
// beyond a statement's text is a method here.
type dialect interface {
	// sql is the dialect's text of the statements that differ.
	sql() *dialectSQL
	// match is a parsed search query as the dialect's index takes it: an
	// FTS5 expression, or a tsquery.
	match(pq parsedQuery) string
	// regionArg is a region as the search's region filter takes it.
	regionArg(region string) string
	// withDoc says whether a page's rows carry each video's words for the
	// index: SQLite's triggers find them themselves.
	withDoc() bool
	// retryable says whether a transaction that failed with err is run
	// again.
	retryable(err error) bool
	// prune, size and writable are Prune, Size and Writable.
	prune(ctx context.Context, db *DB, r Retention) (Pruned, error)
	size(ctx context.Context, db *DB) (Size, error)
	writable(ctx context.Context, db *DB) error
	// server describes the database for `ingest check`.
	server(ctx context.Context, db *DB) (string, error)
	// guard refuses a write transaction on a database another host
	// migrated past this binary's schema (*VersionError), before it
	// writes anything the newer schema could misread.
	guard(ctx context.Context, tx *sql.Tx, path string) error
	// columns, keyOrder, startCopy, copied and endCopy are what a copy
	// does on this database (copy_dialect.go).
	columns(ctx context.Context, q reader, table string) ([]string, error)
	keyOrder(keys []string) string
	startCopy(ctx context.Context, tx *sql.Tx) error
	copied(ctx context.Context, tx *sql.Tx, table string, cols []string, rows [][]any) error
	endCopy(ctx context.Context, db *DB) error
}

// dialectSQL holds each statement whose text differs between the
// databases. The functions take what the shared code varies: the filters
// of a search, an export's WHERE clause.
type dialectSQL struct {
	// The page's statements (pages.go); docs, when set, keeps the search
	// index in step where no trigger does.
	upsertVideos, addRegions, addTrending, addSearch, bumpTrending, bumpSearch, docs string
	saveCategory, categoryFetched                                                    string
	saveStats                                                                        string
	chartTrend, chartPeaks, videoCategories                                          string
	counts, dailyCounts                                                              string
	details                                                                          string
	// lockBatch ends the SELECT of a batch of videos that a prune deletes
	// with every row pointing at them: PostgreSQL locks them, skipping one
	// another host's page holds (that page may be about to point at it).
	lockBatch string
	// videoRows are the tables whose rows point at a video, deleted before
	// it, the index's among them where no trigger keeps it.
	videoRows                     []string
	ranked, newest, titled, count func(searchFilter) string
	export, exportDay             func(where string) string
}

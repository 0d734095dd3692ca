package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// sqliteDialect is SQLite's: FTS5 kept by triggers, one writer, a file
// that retention shrinks by incremental vacuum.
type sqliteDialect struct{}

// sqliteSQL is SQLite's text of the statements that differ; each sits
// beside the method that runs it.
var sqliteSQL = &dialectSQL{
	upsertVideos: upsertVideosSQL, addRegions: addRegionsSQL,
	addTrending: addTrendingSQL, addSearch: addSearchSQL,
	bumpTrending: bumpTrendingSQL, bumpSearch: bumpSearchSQL,
	saveCategory: saveCategorySQL, categoryFetched: categoryFetchedSQL,
	saveStats: saveStatsSQL, touchToken: touchTokenSQL,
	chartTrend: chartTrendSQL, chartPeaks: chartPeaksSQL, videoCategories: videoCategoriesSQL,
	counts: countsSQL, dailyCounts: dailyCountsSQL,
	details:   detailsSQL,
	videoRows: videoRowTables,
	ranked:    sqliteSearch(rankedSQL), newest: sqliteSearch(newestSQL), titled: sqliteSearch(titledSQL), count: sqliteSearch(countSQL),
	export:    func(where string) string { return fmt.Sprintf(exportSQL, where) },
	exportDay: func(where string) string { return fmt.Sprintf(exportDaySQL, where) },
}

// sqliteSearch fills a search statement's %s with the filters a search
// sets, or nothing.
func sqliteSearch(q string) func(searchFilter) string {
	return searchVariants(q, regionFilter, "",
		`AND EXISTS (SELECT 1 FROM videos AS v WHERE v.vid = videos_fts.rowid AND `+languageMatch+`)`)
}

// searchVariants writes a search statement for each pair of filters, once:
// its %s is the region's filter (noRegion when it has none) and the
// language's.
func searchVariants(q, region, noRegion, language string) func(searchFilter) string {
	var v [2][2]string
	for r, rf := range []string{noRegion, region} {
		for l, lf := range []string{"", language} {
			v[r][l] = fmt.Sprintf(q, strings.TrimSpace(rf+" "+lf))
		}
	}
	return func(f searchFilter) string {
		return v[b2i(f.inRegion)][b2i(f.language != "")]
	}
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

func (sqliteDialect) sql() *dialectSQL               { return sqliteSQL }
func (sqliteDialect) match(pq parsedQuery) string    { return pq.expr }
func (sqliteDialect) regionArg(region string) string { return region }
func (sqliteDialect) withDoc() bool                  { return false }
func (sqliteDialect) retryable(error) bool           { return false }
func (sqliteDialect) prune(ctx context.Context, db *DB, r Retention) (Pruned, error) {
	return db.sqlitePrune(ctx, r)
}
func (sqliteDialect) size(ctx context.Context, db *DB) (Size, error) { return db.sqliteSize(ctx) }

// lockQuotaKey takes no lock: SQLite's immediate transactions take turns.
func (sqliteDialect) lockQuotaKey(context.Context, *sql.Tx, string) error { return nil }

// writable begins an immediate transaction and rolls it back.
func (sqliteDialect) writable(ctx context.Context, db *DB) error {
	tx, err := db.w.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("database %s: %w", db.path, err)
	}
	return tx.Rollback()
}

func (sqliteDialect) server(context.Context, *DB) (string, error) {
	return fmt.Sprintf("sqlite, schema version %d", SchemaVersion), nil
}

// sqliteTurns are the embedded limiter's turns on SQLite: one host, whose
// processes share the file and its clock.
type sqliteTurns struct{ w *sql.DB }

// Decide is BEGIN IMMEDIATE (_txlock=immediate in DSN): the database's one
// write lock, for every quota key at once.
func (t sqliteTurns) Decide(ctx context.Context, _ string, _ time.Duration) (*sql.Tx, error) {
	return t.w.BeginTx(ctx, nil)
}

// Read is a plain deferred BEGIN, which a query-only connection allows.
func (t sqliteTurns) Read(ctx context.Context) (*sql.Tx, error) {
	return t.w.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
}

// Clock is this host's: every process sharing the file is on it.
func (sqliteTurns) Clock(context.Context, *sql.Tx) (int64, error) { return time.Now().UnixMilli(), nil }

// Down: the write lock was held past the timeout.
func (sqliteTurns) Down(ctx context.Context, err error) bool {
	if ctx.Err() != nil || errors.Is(err, context.DeadlineExceeded) {
		return true
	}
	var serr *sqlite.Error
	if errors.As(err, &serr) {
		code := serr.Code() & 0xff
		return code == sqlite3.SQLITE_BUSY || code == sqlite3.SQLITE_LOCKED || code == sqlite3.SQLITE_INTERRUPT
	}
	return false
}

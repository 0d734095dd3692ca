package store

import (
	"context"
	"database/sql"
	"fmt"
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
	details: detailsSQL,
	ranked:  inRegion(rankedSQL), newest: inRegion(newestSQL), titled: inRegion(titledSQL), count: inRegion(countSQL),
	exportDay: func(where string) string { return fmt.Sprintf(exportDaySQL, where) },
}

// inRegion fills a search statement's %s with the region filter or
// nothing.
func inRegion(q string) func(bool) string {
	all, one := fmt.Sprintf(q, ""), fmt.Sprintf(q, regionFilter)
	return func(in bool) string {
		if in {
			return one
		}
		return all
	}
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

package store

import (
	"context"
	"fmt"
	"strings"
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
	saveStats:  saveStatsSQL,
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

package store

import (
	"context"
	"database/sql"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/ingestworks/ingest"
)

// ExportFilter chooses the chart runs an export reads: the trending runs
// started in [Since, Until) that have ended, of one region and one chart
// when set. A run still in flight is never read: its rows are not all
// there yet (ExportRuns names such runs, for a caller that waits).
type ExportFilter struct {
	Since, Until time.Time
	Region       string // "" every region
	// Category is a videoCategoryId; "" every chart, unless Unfiltered
	// asks for the unfiltered chart alone.
	Category   string
	Unfiltered bool
	// PerDay gives one row per video, region and chart a day instead of
	// one per run: the counts and rank of the day's last run that showed
	// the video, stamped with the day's 00:00 UTC.
	PerDay bool
	// CompleteOnly reads only the runs that stored the whole chart
	// (completed), leaving out those cut short (stopped, interrupted,
	// failed).
	CompleteOnly bool
}

// ExportRow is one video on one chart run: its latest metadata, as every
// reader reads it (videoColumns), and the counts and rank of that run.
type ExportRow struct {
	StoredVideo
	// TrendingAt is when the run started, to the second (one time for a
	// whole run); with PerDay, the day's 00:00 UTC.
	TrendingAt time.Time
	// RunAt is when the row's run (RunID) started, to the second: with
	// PerDay too, where it dates the row in the region's own calendar.
	RunAt time.Time
	// FetchedAt is when the row's entry was fetched (its page's time): the
	// UTC day days_on_chart counts a video on a chart by.
	FetchedAt time.Time
	// Views, Likes and Comments are the run's counts (the video's latest
	// are ViewCount and the others); nil: hidden.
	Views, Likes, Comments *int64
	Region                 string
	Chart                  string // the run's category, "" the unfiltered chart
	Rank                   int
	RunID                  int64 // the run the counts and rank come from
	// RunStatus is how that run ended; Complete says it stored the whole
	// chart (completed), as the chart API says.
	RunStatus ingest.RunStatus
	Complete  bool
	// CategoryTitle is the upstream's English name of the video's category
	// (videoCategories.list's title, asked in English) in the row's
	// region, or in another region, since the names are the same in every
	// region; "" when no region's English names are stored.
	CategoryTitle string
	// CategoryTitleLocal is the category's name in the row's region's
	// language (regions.Language), as the upstream gave it for that
	// region, English where it has none; "" when the region's names are
	// not stored.
	CategoryTitleLocal string
	// RanksLost is how many ranks below its last the row's run holds no
	// entry at: the chart moved between its pages (FinishRun's message
	// names them).
	RanksLost int
	// Daily says the row is a day's (ExportFilter.PerDay): TrendingAt is
	// the UTC day the row sums up, not a run's start.
	Daily bool
}

// where is the filter as SQL over runs AS r: runs_started (kind,
// started_ms) finds the runs by range.
func (f ExportFilter) where() (string, []any) {
	conds, args := f.chosen()
	conds = append(conds, `r.status <> 'running'`)
	if f.CompleteOnly {
		conds = append(conds, `r.status = 'completed'`)
	}
	return strings.Join(conds, " AND "), args
}

// chosen is the filter's range and chart as SQL over runs AS r, whatever
// the runs' status.
func (f ExportFilter) chosen() ([]string, []any) {
	conds := []string{`r.kind = 'trending'`, `r.started_ms >= ?`, `r.started_ms < ?`}
	args := []any{msOf(f.Since), msOf(f.Until)}
	if f.Region != "" {
		conds, args = append(conds, `r.region = ?`), append(args, f.Region)
	}
	if f.Category != "" || f.Unfiltered {
		conds, args = append(conds, `r.category = ?`), append(args, f.Category)
	}
	return conds, args
}

// ExportRun is a run of an export's range, in whatever state: what an
// export says it took, and what it left for later and why.
type ExportRun struct {
	ID               int64
	Region, Category string
	Status           ingest.RunStatus
	Started          time.Time
	Videos           int // entries stored
}

// ExportRuns lists the trending runs the filter's range and chart choose,
// running or ended, oldest first (CompleteOnly and the status aside).
func (db *DB) ExportRuns(ctx context.Context, f ExportFilter) ([]ExportRun, error) {
	conds, args := f.chosen()
	rows, err := db.r.QueryContext(ctx, `SELECT r.id, r.region, r.category, r.status, r.started_ms, r.videos
FROM runs AS r WHERE `+strings.Join(conds, " AND ")+` ORDER BY r.started_ms, r.id`, args...)
	if err != nil {
		return nil, fmt.Errorf("export runs: %w", err)
	}
	defer rows.Close()
	var runs []ExportRun
	for rows.Next() {
		var r ExportRun
		var started int64
		if err := rows.Scan(&r.ID, &r.Region, &r.Category, &r.Status, &started, &r.Videos); err != nil {
			return nil, fmt.Errorf("export runs: %w", err)
		}
		r.Started = time.UnixMilli(started).UTC()
		runs = append(runs, r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("export runs: %w", err)
	}
	return runs, nil
}

// ExportCount returns how many rows Export will give, from the runs'
// counts (no pass over the entries): a progress bar's total.
func (db *DB) ExportCount(ctx context.Context, f ExportFilter) (int64, error) {
	where, args := f.where()
	var n sql.NullInt64
	if err := db.r.QueryRowContext(ctx, `SELECT sum(r.videos) FROM runs AS r WHERE `+where, args...).Scan(&n); err != nil {
		return 0, fmt.Errorf("export count: %w", err)
	}
	return n.Int64, nil
}

// sqliteExportText reads the entries run by run, oldest first, each run's by rank:
// the runs by range on runs_started, the entries by their primary key, so
// rows stream out in constant memory (only one run's entries are sorted).
var sqliteExportText = `
SELECT ` + videoColumns + `, r.started_ms / 1000 * 1000, e.view_count, e.like_count, e.comment_count,
  r.region, r.category, e.rank, r.id, r.status, r.started_ms / 1000 * 1000, e.fetched_ms
FROM runs AS r
JOIN trending_entries AS e ON e.run_id = r.id
JOIN videos AS v ON v.vid = e.vid
WHERE %s
ORDER BY r.kind, r.started_ms, r.id, e.rank`

// sqliteExportDayText reads one day's rows (the runs the filter selects started
// that day): per chart and video, the entry of its last run that day
// (max(r.id): run ids follow start times; SQLite takes the other columns
// from the row holding the max), by chart and rank. The runs are found by
// range on runs_started, named because the grouping by region and chart
// otherwise draws the planner to runs_last, which walks every run of the
// kind (or region) for each day. The day's entries are grouped on their
// own narrow columns and only the day's rows then read their videos, so
// that the sorters hold a video's text once per row written, not once per
// entry read.
var sqliteExportDayText = `
SELECT ` + videoColumns + `, ?, d.view_count, d.like_count, d.comment_count,
  d.region, d.category, d.rank, d.run_id, d.status, d.started_ms / 1000 * 1000, d.fetched_ms
FROM (SELECT r.region, r.category, e.vid, e.view_count, e.like_count, e.comment_count, e.rank, r.status, r.started_ms, e.fetched_ms, max(r.id) AS run_id
  FROM runs AS r INDEXED BY runs_started
  JOIN trending_entries AS e ON e.run_id = r.id
  WHERE %s
  GROUP BY r.region, r.category, e.vid) AS d
JOIN videos AS v ON v.vid = d.vid
ORDER BY d.region, d.category, d.rank, v.id`

// pgExportText is sqliteExportText on PostgreSQL, where the order is taken on the
// entries' narrow columns and each row's video is read after it. Prepared
// once and planned for any range, the flat join sorts the rows whole,
// videos' text and all, on disk; here the sort holds a few numbers a row
// and the lateral read (which the planner cannot turn into a hash join)
// keeps that order. The kind is fixed by the filter, so the order leaves
// it out, as it must for the planner to see the rows arrive sorted.
var pgExportText = `
SELECT ` + videoColumns + `, d.started_ms / 1000 * 1000, d.view_count, d.like_count, d.comment_count,
  d.region, d.category, d.rank, d.id, d.status, d.started_ms / 1000 * 1000, d.fetched_ms
FROM (
  SELECT r.started_ms, r.id, r.region, r.category, e.rank, e.vid, e.view_count, e.like_count, e.comment_count, r.status, e.fetched_ms
  FROM runs AS r
  JOIN trending_entries AS e ON e.run_id = r.id
  WHERE %s
  ORDER BY r.started_ms, r.id, e.rank) AS d
CROSS JOIN LATERAL (SELECT * FROM videos AS v WHERE v.vid = d.vid OFFSET 0) AS v
ORDER BY d.started_ms, d.id, d.rank`

// pgExportDayText is sqliteExportDayText on PostgreSQL: the row of each video's
// last run of the day by DISTINCT ON, where SQLite takes it beside max(),
// over the entries' narrow columns before the join to videos.
// Its placeholders stay ?, numbered in order with the filter's.
var pgExportDayText = `
SELECT ` + videoColumns + `, ?::bigint, d.view_count, d.like_count, d.comment_count,
  d.region, d.category, d.rank, d.run_id, d.status, d.started_ms / 1000 * 1000, d.fetched_ms
FROM (
  SELECT DISTINCT ON (r.region, r.category, e.vid) r.region, r.category, e.vid, e.view_count,
    e.like_count, e.comment_count, e.rank, r.id AS run_id, r.status, r.started_ms, e.fetched_ms
  FROM runs AS r
  JOIN trending_entries AS e ON e.run_id = r.id
  WHERE %s
  ORDER BY r.region, r.category, e.vid, r.id DESC) AS d
JOIN videos AS v ON v.vid = d.vid
ORDER BY d.region, d.category, d.rank, v.id`

// exportStmts are the export's statements for a filter's WHERE clause,
// each database's text.
type exportStmts struct{ export, exportDay func(where string) string }

var (
	sqliteExportSQL = exportStmts{
		export:    func(where string) string { return fmt.Sprintf(sqliteExportText, where) },
		exportDay: func(where string) string { return fmt.Sprintf(sqliteExportDayText, where) },
	}
	pgExportSQL = exportStmts{
		export:    func(where string) string { return fmt.Sprintf(pgExportText, where) },
		exportDay: func(where string) string { return fmt.Sprintf(pgExportDayText, where) },
	}
)

// Export calls fn with every row the filter selects, oldest run first, as
// the rows are read: nothing is held beyond the row. An error from fn stops
// it and is returned as it is.
func (db *DB) Export(ctx context.Context, f ExportFilter, fn func(ExportRow) error) error {
	titles, err := db.categoryTitles(ctx)
	if err != nil {
		return fmt.Errorf("export: %w", err)
	}
	lost, err := db.exportLost(ctx, f)
	if err != nil {
		return fmt.Errorf("export: %w", err)
	}
	named := func(r ExportRow) error {
		r.CategoryTitle, r.CategoryTitleLocal = titles.of(r.Region, r.CategoryID)
		r.Daily, r.RanksLost = f.PerDay, lost[r.RunID]
		return fn(r)
	}
	if f.PerDay {
		return db.exportDays(ctx, f, named)
	}
	where, args := f.where()
	return db.exportRows(ctx, db.q.export(where), args, named)
}

// exportLost counts, for each run of the filter that lost ranks
// (lostRanks: page by page, the places below the page's last stored rank
// that no entry holds), how many: read once for an export, a number a run.
func (db *DB) exportLost(ctx context.Context, f ExportFilter) (map[int64]int, error) {
	where, args := f.where()
	rows, err := db.r.QueryContext(ctx, `SELECT run_id, CAST(sum(lost) AS BIGINT) FROM (
  SELECT e.run_id, max(e.rank) - min((e.rank - 1) / `+pageSize+`) * `+pageSize+` - count(*) AS lost
  FROM runs AS r JOIN trending_entries AS e ON e.run_id = r.id
  WHERE `+where+` GROUP BY e.run_id, (e.rank - 1) / `+pageSize+`) AS p
GROUP BY run_id HAVING sum(lost) > 0`, args...)
	if err != nil {
		return nil, fmt.Errorf("lost ranks: %w", err)
	}
	defer rows.Close()
	lost := map[int64]int{}
	for rows.Next() {
		var run int64
		var n int
		if err := rows.Scan(&run, &n); err != nil {
			return nil, fmt.Errorf("lost ranks: %w", err)
		}
		lost[run] = n
	}
	return lost, rows.Err()
}

// pageSize is PageSize in a statement's text.
var pageSize = strconv.Itoa(PageSize)

// categoryTitles are the stored names of the categories: by region and
// id, in the language each region's were asked in, and by id in English
// from any region asked in English: read once for an export, a few dozen
// a region, rather than joined to each of its rows.
type categoryTitles struct{ byRegion, english map[string]string }

func (db *DB) categoryTitles(ctx context.Context) (categoryTitles, error) {
	t := categoryTitles{byRegion: map[string]string{}, english: map[string]string{}}
	rows, err := db.r.QueryContext(ctx, `SELECT region, id, title, language FROM categories ORDER BY region, id`)
	if err != nil {
		return t, fmt.Errorf("categories: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var region, id, title, lang string
		if err := rows.Scan(&region, &id, &title, &lang); err != nil {
			return t, fmt.Errorf("categories: %w", err)
		}
		t.byRegion[region+"/"+id] = title
		if _, ok := t.english[id]; !ok && title != "" && english(lang) {
			t.english[id] = title
		}
	}
	return t, rows.Err()
}

// english says whether hl asks for English: none (the upstream's
// default), en, or en with a region (en-GB).
func english(hl string) bool {
	return hl == "" || hl == "en" || strings.HasPrefix(hl, "en-") || strings.HasPrefix(hl, "en_")
}

// of is the category id's English name and its name in region's language.
func (t categoryTitles) of(region, id string) (english, local string) {
	if id == "" {
		return "", ""
	}
	return t.english[id], t.byRegion[region+"/"+id]
}

// exportDays exports day by day, oldest first, each day's runs alone.
func (db *DB) exportDays(ctx context.Context, f ExportFilter, fn func(ExportRow) error) error {
	for day := f.Since.UTC().Truncate(24 * time.Hour); day.Before(f.Until); day = day.Add(24 * time.Hour) {
		d := f // the filter's range cut to the day
		if day.After(d.Since) {
			d.Since = day
		}
		if end := day.Add(24 * time.Hour); end.Before(d.Until) {
			d.Until = end
		}
		where, args := d.where()
		if err := db.exportRows(ctx, db.q.exportDay(where), append([]any{msOf(day)}, args...), fn); err != nil {
			return err
		}
	}
	return nil
}

func (db *DB) exportRows(ctx context.Context, q string, args []any, fn func(ExportRow) error) error {
	rows, err := db.r.QueryContext(ctx, q, args...)
	if err != nil {
		return fmt.Errorf("export: %w", err)
	}
	defer rows.Close()
	s := newExportScanner()
	for rows.Next() {
		row, err := s.scan(rows)
		if err != nil {
			return fmt.Errorf("export: %w", err)
		}
		if err := fn(row); err != nil {
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("export: %w", err)
	}
	return nil
}

// exportScanner reads export rows, one scanner for a query's rows.
type exportScanner struct {
	video                  *videoScanner
	row                    ExportRow // the run's columns; the video is the scanner's
	at, runAt, fetched     int64
	views, likes, comments sql.NullInt64
}

func newExportScanner() *exportScanner {
	s := &exportScanner{}
	s.video = newVideoScanner(&s.at, &s.views, &s.likes, &s.comments, &s.row.Region, &s.row.Chart, &s.row.Rank, &s.row.RunID, &s.row.RunStatus, &s.runAt, &s.fetched)
	return s
}

func (s *exportScanner) scan(rows *sql.Rows) (ExportRow, error) {
	v, err := s.video.scan(rows)
	if err != nil {
		return ExportRow{}, fmt.Errorf("video %s: %w", v.ID, err)
	}
	r := s.row
	r.StoredVideo = v
	r.TrendingAt, r.RunAt, r.FetchedAt = time.UnixMilli(s.at).UTC(), time.UnixMilli(s.runAt).UTC(), time.UnixMilli(s.fetched).UTC()
	r.Views, r.Likes, r.Comments = ptrs(s.views, s.likes, s.comments)
	r.Complete = r.RunStatus == ingest.StatusCompleted
	return r, nil
}

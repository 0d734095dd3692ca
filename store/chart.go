package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/ingestworks/ingest"
)

// ErrNoChart: a chart (a region's, or a region's category's) has no stored
// run (at that time).
var ErrNoChart = errors.New("no chart")

// chartRunSQL finds the run whose chart was current at ?2: the newest
// finished trending run of the chart (region ?1, category ?3, "" the
// unfiltered chart) that stored entries and started at or before it.
//
// One seek down runs_started finds the newest run of any chart started by
// then; the chart's runs are then walked down runs_last from that id. Run
// ids follow start times (a run's row is written when it starts, by the
// database's one writer), so no run of the chart started by then has a
// larger id. Left to itself, the planner would read every run before the
// time through runs_started and sort them, a cost that grows with the
// history; this way it is two seeks and a short walk.
const chartRunSQL = `
SELECT id FROM runs
WHERE kind = 'trending' AND region = ?1 AND category = ?3 AND status <> 'running' AND videos > 0
  AND +started_ms <= ?2
  AND id <= (SELECT id FROM runs WHERE kind = 'trending' AND started_ms <= ?2 ORDER BY started_ms DESC LIMIT 1)
ORDER BY id DESC LIMIT 1`

// prevRunSQL finds the runs of the same chart before run ?2, newest first.
const prevRunSQL = `
SELECT id FROM runs
WHERE kind = 'trending' AND region = ?1 AND category = ?4 AND status <> 'running' AND videos > 0 AND id < ?2
ORDER BY id DESC LIMIT ?3`

// FirstChartAt is when the chart of region and category ("" the
// unfiltered one) started its first stored run, the earliest time ChartAt
// answers for; false when it has none.
func (db *DB) FirstChartAt(ctx context.Context, region, category string) (time.Time, bool, error) {
	var ms int64
	err := db.r.QueryRowContext(ctx, `SELECT started_ms FROM runs
WHERE kind = 'trending' AND region = ? AND category = ? AND status <> 'running' AND videos > 0
ORDER BY id LIMIT 1`, region, category).Scan(&ms)
	if errors.Is(err, sql.ErrNoRows) {
		return time.Time{}, false, nil
	}
	if err != nil {
		return time.Time{}, false, fmt.Errorf("first run of %s: %w", ingest.ChartName(region, category), err)
	}
	return time.UnixMilli(ms).UTC(), true, nil
}

// ChartEntry is one video's place in a chart: the video as every reader
// reads it (videoColumns), and what the chart adds.
type ChartEntry struct {
	StoredVideo
	Rank      int
	Views     *int64  // the views at this entry, nil hidden (the video's latest are ViewCount)
	PrevRank  int     // 0: not in the previous chart (new)
	ViewTrend []int64 // views at this video's entries in the recent runs, oldest first
	DayRank   int     // rank in the chart's run a day before this one; 0: not in it
	// PrevViews and DayViews are the views at the entries in the previous
	// run and in the run a day before (when PrevRank, DayRank say it was
	// in them; 0 hidden).
	PrevViews int64
	DayViews  int64
	// Peak is the best rank the video had in this chart up to this run,
	// and Days the number of days (UTC) it was in it.
	Peak int
	Days int

	vid int64 // the video's row, so that the history needs no join
}

// Chart is a region's trending chart (or one category's) at one run.
type Chart struct {
	Region   string
	Category string // the videoCategoryId, "" the unfiltered chart
	// Language keeps the chart's videos in one language (see Language),
	// each at its rank in the whole chart; "" all of them.
	Language string
	RunID    int64
	At       time.Time // when the run started
	Status   ingest.RunStatus
	PrevRun  int64 // 0: no earlier chart
	PrevAt   time.Time
	NextRun  int64 // 0: this is the chart's latest run
	NextAt   time.Time
	DayRun   int64 // the chart's run current a day before this one; 0: none
	DayAt    time.Time
	Entries  []ChartEntry
	Complete bool // the run stored the whole chart

	// stored is how many entries the run stored: the room its entries
	// are read into is made once, not grown row by row.
	stored int
}

// sparkRuns is how many runs a chart's sparklines look back over.
const sparkRuns = 24

// ChartQuery is which chart Chart reads, and how much of it.
type ChartQuery struct {
	Region   string
	Category string // "" the unfiltered chart
	// Language keeps the chart to the videos in it (see Language), each at
	// its rank in the whole chart; "" every video.
	Language string
	// At picks the newest run that started at or before it; zero, the
	// latest. A time with no fraction of a second covers its whole
	// second: every time the tool prints is to the second, and a run
	// found by the time printed for it must be that run.
	At    time.Time
	Limit int
	Depth ChartDepth
}

// ChartDepth is how much of a chart's history Chart reads beside its run.
type ChartDepth int

const (
	// ChartFull adds each video's rank in the previous run, its views
	// over the chart's last sparkRuns runs, and what ingest computes from
	// the whole history: trend, peak, days.
	ChartFull ChartDepth = iota
	// ChartPlain leaves the computed figures empty and reads the previous
	// run, the next and the run a day before, one run each: the chart when
	// the computed figures are not shown.
	ChartPlain
	// ChartMoves reads the previous run alone: each entry's rank and views
	// in it, and nothing else of the history.
	ChartMoves
	// ChartBare is the run alone.
	ChartBare
)

// Chart returns the chart q names. It returns an error wrapping ErrNoChart
// when there is no such run.
func (db *DB) Chart(ctx context.Context, q ChartQuery) (Chart, error) {
	at := q.At
	switch {
	case at.IsZero():
		at = time.UnixMilli(1<<62 - 1)
	case at.Nanosecond() == 0:
		at = at.Add(time.Second - time.Millisecond)
	}
	name := ingest.ChartName(q.Region, q.Category)
	language, err := Language(q.Language)
	if err != nil {
		return Chart{}, fmt.Errorf("chart of %s: %w", name, err)
	}
	c := Chart{Region: q.Region, Category: q.Category, Language: language}
	err = db.r.QueryRowContext(ctx, chartRunSQL, q.Region, at.UnixMilli(), q.Category).Scan(&c.RunID)
	if errors.Is(err, sql.ErrNoRows) {
		return c, fmt.Errorf("chart of %s: %w", name, ErrNoChart)
	}
	entries := func(ctx context.Context, c *Chart) error { return db.chartEntries(ctx, c, q.Limit) }
	steps := []func(context.Context, *Chart) error{db.chartRun, entries}
	switch q.Depth {
	case ChartFull:
		steps = append(steps, db.chartHistory, db.chartNext, db.chartPeaks, db.chartDayAgo)
	case ChartPlain:
		steps = append(steps, db.chartPrev, db.chartNext, db.chartDayAgo)
	case ChartMoves:
		steps = append(steps, db.chartPrev)
	}
	for _, step := range steps {
		if err == nil {
			err = step(ctx, &c)
		}
	}
	if err != nil {
		return c, fmt.Errorf("chart of %s: %w", name, err)
	}
	return c, nil
}

// chartPrevRun names the chart's previous run, if any.
func (db *DB) chartPrevRun(ctx context.Context, c *Chart) error {
	var prevAt int64
	err := db.r.QueryRowContext(ctx, `SELECT id, started_ms FROM runs WHERE id = (`+prevRunSQL+`)`, c.Region, c.RunID, 1, c.Category).Scan(&c.PrevRun, &prevAt)
	if errors.Is(err, sql.ErrNoRows) {
		return nil
	}
	if err == nil {
		c.PrevAt = time.UnixMilli(prevAt).UTC()
	}
	return err
}

// chartPrev fills each entry's rank and views in the chart's previous run.
func (db *DB) chartPrev(ctx context.Context, c *Chart) error {
	if err := db.chartPrevRun(ctx, c); err != nil || c.PrevRun == 0 {
		return err
	}
	return db.otherRun(ctx, c, c.PrevRun, func(e *ChartEntry, rank int, views int64) { e.PrevRank, e.PrevViews = rank, views })
}

// otherRun gives each entry of c its rank and views in another run of the
// chart, for those it held there.
func (db *DB) otherRun(ctx context.Context, c *Chart, run int64, set func(e *ChartEntry, rank int, views int64)) error {
	byVid := make(map[int64]*ChartEntry, len(c.Entries))
	for i := range c.Entries {
		byVid[c.Entries[i].vid] = &c.Entries[i]
	}
	rows, err := db.r.QueryContext(ctx, `SELECT vid, rank, coalesce(view_count, 0) FROM trending_entries WHERE run_id = ? AND region = ?`, run, c.Region)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var vid, views int64
		var rank int
		if err := rows.Scan(&vid, &rank, &views); err != nil {
			return err
		}
		if e := byVid[vid]; e != nil {
			set(e, rank, views)
		}
	}
	return rows.Err()
}

func (db *DB) chartRun(ctx context.Context, c *Chart) error {
	var started int64
	if err := db.r.QueryRowContext(ctx, `SELECT started_ms, status, videos FROM runs WHERE id = ?`, c.RunID).
		Scan(&started, &c.Status, &c.stored); err != nil {
		return err
	}
	c.At, c.Complete = time.UnixMilli(started).UTC(), c.Status == ingest.StatusCompleted
	return nil
}

func (db *DB) chartEntries(ctx context.Context, c *Chart, limit int) error {
	q, args := chartEntriesSQL, []any{c.RunID, c.Region, limit}
	if c.Language != "" {
		q, args = chartEntriesInSQL, append(args, languageArgs(c.Language)...)
	}
	rows, err := db.r.QueryContext(ctx, q, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	if n := min(limit, c.stored); n > 0 {
		c.Entries = make([]ChartEntry, 0, n)
	}
	var e ChartEntry // the entry's own columns, read row after row
	var views sql.NullInt64
	s := newVideoScanner(&e.Rank, &e.vid, &views)
	for rows.Next() {
		v, err := s.scan(rows)
		if err != nil {
			return err
		}
		c.Entries = append(c.Entries, ChartEntry{StoredVideo: v, Rank: e.Rank, vid: e.vid, Views: ptr(views)})
	}
	if len(c.Entries) == 0 {
		c.Entries = nil // a chart of no entries reads as one, room made or not
	}
	return rows.Err()
}

// chartHistory fills the previous ranks and the sparklines from the
// entries of the chart's last sparkRuns runs before this one.
func (db *DB) chartHistory(ctx context.Context, c *Chart) error {
	ids, err := db.runIDs(ctx, prevRunSQL, c.Region, c.RunID, sparkRuns-1, c.Category)
	if err != nil || len(ids) == 0 {
		return err
	}
	c.PrevRun = ids[0]
	var prevAt int64
	if err := db.r.QueryRowContext(ctx, `SELECT started_ms FROM runs WHERE id = ?`, c.PrevRun).Scan(&prevAt); err != nil {
		return err
	}
	c.PrevAt = time.UnixMilli(prevAt).UTC()
	byVid := map[int64]*ChartEntry{}
	for i := range c.Entries {
		byVid[c.Entries[i].vid] = &c.Entries[i]
	}
	// The entries alone, by the clustered key (run_id, region, vid): no
	// lookup in videos for each of the ~sparkRuns x 200 rows.
	rows, err := db.r.QueryContext(ctx, db.q.chartTrend, jsonIDs(append(ids, c.RunID)), c.Region)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var run, vid, views int64
		var rank int
		if err := rows.Scan(&run, &vid, &rank, &views); err != nil {
			return err
		}
		if e := byVid[vid]; e != nil {
			e.ViewTrend = append(e.ViewTrend, views)
			if run == c.PrevRun {
				e.PrevRank, e.PrevViews = rank, views
			}
		}
	}
	return rows.Err()
}

// chartNext finds the chart's run after this one, if any (runs_last).
func (db *DB) chartNext(ctx context.Context, c *Chart) error {
	var at int64
	err := db.r.QueryRowContext(ctx, `
SELECT id, started_ms FROM runs
WHERE kind = 'trending' AND region = ?1 AND category = ?3 AND status <> 'running' AND videos > 0 AND id > ?2
ORDER BY id LIMIT 1`, c.Region, c.RunID, c.Category).Scan(&c.NextRun, &at)
	if errors.Is(err, sql.ErrNoRows) {
		return nil
	}
	c.NextAt = time.UnixMilli(at).UTC()
	return err
}

// chartDayAgo fills each entry's rank in the chart as it was a day
// before this run (its run current then, found as ChartAt finds one).
func (db *DB) chartDayAgo(ctx context.Context, c *Chart) error {
	dayAgo := c.At.Add(-24 * time.Hour)
	err := db.r.QueryRowContext(ctx, chartRunSQL, c.Region, dayAgo.UnixMilli(), c.Category).Scan(&c.DayRun)
	if errors.Is(err, sql.ErrNoRows) {
		return nil
	}
	if err != nil {
		return err
	}
	var at int64
	if err := db.r.QueryRowContext(ctx, `SELECT started_ms FROM runs WHERE id = ?`, c.DayRun).Scan(&at); err != nil {
		return err
	}
	c.DayAt = time.UnixMilli(at).UTC()
	return db.otherRun(ctx, c, c.DayRun, func(e *ChartEntry, rank int, views int64) { e.DayRank, e.DayViews = rank, views })
}

// chartPeaks fills each entry's best rank and days in this chart up to
// this run: whole days from the daily rollup, and the entries of the
// run's own day, before the next run, from trending_entries_day.
func (db *DB) chartPeaks(ctx context.Context, c *Chart) error {
	if len(c.Entries) == 0 {
		return nil
	}
	// The next run of the chart started after every entry of this one was
	// fetched (a chart's runs never overlap).
	until := int64(1<<62 - 1)
	if c.NextRun != 0 {
		until = c.NextAt.UnixMilli()
	}
	byVid := make(map[int64]*ChartEntry, len(c.Entries))
	vids := make([]int64, len(c.Entries))
	for i := range c.Entries {
		byVid[c.Entries[i].vid], vids[i] = &c.Entries[i], c.Entries[i].vid
	}
	rows, err := db.r.QueryContext(ctx, db.q.chartPeaks, jsonIDs(vids), c.Region, c.Category, until, until/dayMS*dayMS)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var vid int64
		var peak, days int
		if err := rows.Scan(&vid, &peak, &days); err != nil {
			return err
		}
		if e := byVid[vid]; e != nil {
			e.Peak, e.Days = peak, days
		}
	}
	return rows.Err()
}

func (db *DB) runIDs(ctx context.Context, q string, args ...any) ([]int64, error) {
	return int64s(db.r.QueryContext(ctx, q, args...))
}

// int64s reads the one integer column of rows: a query's ids.
func int64s(rows *sql.Rows, err error) ([]int64, error) {
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var ids []int64
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			return nil, err
		}
		ids = append(ids, id)
	}
	return ids, rows.Err()
}

func jsonIDs(ids []int64) string {
	parts := make([]string, len(ids))
	for i, id := range ids {
		parts[i] = fmt.Sprint(id)
	}
	return "[" + strings.Join(parts, ",") + "]"
}

// ChartName is one chart the database holds runs of.
type ChartName struct {
	Region   string
	Category string // "" the unfiltered chart
}

// Charts lists the charts with stored entries, by region and category.
func (db *DB) Charts(ctx context.Context) ([]ChartName, error) {
	rows, err := db.r.QueryContext(ctx, `
SELECT DISTINCT region, category FROM runs WHERE kind = 'trending' AND videos > 0 ORDER BY region, category`)
	if err != nil {
		return nil, fmt.Errorf("charts: %w", err)
	}
	defer rows.Close()
	var out []ChartName
	for rows.Next() {
		var c ChartName
		if err := rows.Scan(&c.Region, &c.Category); err != nil {
			return nil, fmt.Errorf("charts: %w", err)
		}
		out = append(out, c)
	}
	return out, rows.Err()
}

// ChartsMark changes whenever the list Charts returns may have: a run
// started (the largest run id), a running run stored a page or ended (the
// running runs' count and videos), or runs were pruned (the smallest id).
// It reads two index ends and the few running runs, so a reader can keep
// the list and read it again only when the mark moved.
func (db *DB) ChartsMark(ctx context.Context) (string, error) {
	var hi, lo, running, videos sql.NullInt64
	err := db.r.QueryRowContext(ctx, `SELECT (SELECT max(id) FROM runs), (SELECT min(id) FROM runs),
  (SELECT count(*) FROM runs WHERE status = 'running'), (SELECT sum(videos) FROM runs WHERE status = 'running')`).Scan(&hi, &lo, &running, &videos)
	if err != nil {
		return "", fmt.Errorf("charts mark: %w", err)
	}
	return fmt.Sprint(hi.Int64, lo.Int64, running.Int64, videos.Int64), nil
}

// VideoCategories returns the category id of each of ids that is stored.
func (db *DB) VideoCategories(ctx context.Context, ids []string) (map[string]string, error) {
	rows, err := db.r.QueryContext(ctx, db.q.videoCategories, jsonStrings(ids))
	if err != nil {
		return nil, fmt.Errorf("video categories: %w", err)
	}
	defer rows.Close()
	out := map[string]string{}
	for rows.Next() {
		var id, cat string
		if err := rows.Scan(&id, &cat); err != nil {
			return nil, fmt.Errorf("video categories: %w", err)
		}
		out[id] = cat
	}
	return out, rows.Err()
}

func jsonStrings(ss []string) string {
	b, _ := json.Marshal(ss) // strings always marshal
	return string(b)
}

// peaksWith names the days a chart's peaks read: days, the whole days
// before the run's own (?5), and own, those from it to the next run (?4).
var peaksWith = "WITH RECURSIVE " + DaysCTE("days", "0", "?5") + ", " + DaysCTE("own", "?5", "?4")

// chartStmts read a chart's trend, its entries' peaks, videos'
// categories, the ranks a steady walk compares and the videos a page
// across regions shows, each database's text:
// PostgreSQL reads a JSON array of ids with jsonb_array_elements_text
// where SQLite takes json_each.
type chartStmts struct{ chartTrend, chartPeaks, videoCategories, steadyRanks, videosOf string }

var (
	sqliteChartSQL = chartStmts{
		chartTrend: `
SELECT e.run_id, e.vid, e.rank, coalesce(e.view_count, 0)
FROM trending_entries AS e
WHERE e.run_id IN (SELECT value FROM json_each(?1)) AND e.region = ?2
ORDER BY e.run_id`,
		chartPeaks: peaksWith + `
SELECT vid, min(rank), sum(days) FROM (
  SELECT d.vid, min(d.best_rank) AS rank, count(*) AS days FROM days CROSS JOIN video_days AS d
  WHERE d.day_ms = days.d AND d.vid IN (SELECT value FROM json_each(?1)) AND d.region = ?2 AND d.category = ?3
    AND d.entries > 0 AND d.day_ms < ?5
  GROUP BY d.vid
  UNION ALL
  SELECT e.vid, min(e.rank), 1 FROM own CROSS JOIN trending_entries AS e
  WHERE ` + EntryDay + ` = own.d AND e.vid IN (SELECT value FROM json_each(?1)) AND e.fetched_ms >= ?5 AND e.fetched_ms < ?4
    AND e.region = ?2 AND e.category = ?3
  GROUP BY e.vid)
GROUP BY vid`,
		videoCategories: `SELECT id, category_id FROM videos
WHERE id IN (SELECT value FROM json_each(?))`,
		steadyRanks: `
SELECT e.run_id, e.vid, e.rank FROM trending_entries AS e
WHERE e.run_id IN (SELECT value FROM json_each(?1)) AND e.region = ?2 AND e.vid IN (SELECT value FROM json_each(?3))`,
		videosOf: `SELECT ` + videoColumns + `, v.vid FROM videos AS v WHERE v.vid IN (SELECT value FROM json_each(?1))`,
	}
	pgChartSQL = chartStmts{
		chartTrend: `
SELECT e.run_id, e.vid, e.rank, coalesce(e.view_count, 0)
FROM trending_entries AS e
WHERE e.run_id IN (SELECT jsonb_array_elements_text(?1::jsonb)::bigint) AND e.region = ?2
ORDER BY e.run_id`,
		chartPeaks: peaksWith + `
SELECT vid, min(rank), sum(days) FROM (
  SELECT d.vid, min(d.best_rank) AS rank, count(*) AS days FROM days CROSS JOIN video_days AS d
  WHERE d.day_ms = days.d AND d.vid IN (SELECT jsonb_array_elements_text(?1::jsonb)::bigint) AND d.region = ?2
    AND d.category = ?3 AND d.entries > 0 AND d.day_ms < ?5
  GROUP BY d.vid
  UNION ALL
  SELECT e.vid, min(e.rank), 1 FROM own CROSS JOIN trending_entries AS e
  WHERE ` + EntryDay + ` = own.d AND e.vid IN (SELECT jsonb_array_elements_text(?1::jsonb)::bigint)
    AND e.fetched_ms >= ?5 AND e.fetched_ms < ?4 AND e.region = ?2 AND e.category = ?3
  GROUP BY e.vid) AS p
GROUP BY vid`,
		videoCategories: `SELECT id, category_id FROM videos
WHERE id IN (SELECT jsonb_array_elements_text(?1::jsonb))`,
		steadyRanks: `
SELECT e.run_id, e.vid, e.rank FROM trending_entries AS e
WHERE e.run_id IN (SELECT jsonb_array_elements_text(?1::jsonb)::bigint) AND e.region = ?2
  AND e.vid IN (SELECT jsonb_array_elements_text(?3::jsonb)::bigint)`,
		videosOf: `SELECT ` + videoColumns + `, v.vid FROM videos AS v
WHERE v.vid IN (SELECT jsonb_array_elements_text(?1::jsonb)::bigint)`,
	}
)

// chartEntriesSQL reads a chart's entries; chartEntriesInSQL those in one
// language.
var (
	chartEntriesSQL   = fmt.Sprintf(chartEntriesText, "")
	chartEntriesInSQL = fmt.Sprintf(chartEntriesText, "AND "+languageMatch)
)

var chartEntriesText = `
SELECT ` + videoColumns + `, e.rank, e.vid, e.view_count
FROM trending_entries AS e JOIN videos AS v ON v.vid = e.vid
WHERE e.run_id = ?1 AND e.region = ?2 %s ORDER BY e.rank LIMIT ?3`

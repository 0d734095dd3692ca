package store

import (
	"cmp"
	"context"
	"database/sql"
	"fmt"
	"slices"
	"time"
)

// ChartPresence is a video's time on one chart.
type ChartPresence struct {
	Region   string
	Category string // "" the unfiltered chart
	First    time.Time
	Last     time.Time
	BestRank int
	LastRank int
	Entries  int // chart runs it was on
}

// CountPoint is a video's counts at one moment, from a chart entry or from
// tracking (video_stats).
type CountPoint struct {
	At       time.Time
	Views    int64
	Likes    *int64 // nil: hidden
	Comments *int64 // nil: hidden
}

// History is what the database knows of one video over time.
type History struct {
	Video  StoredVideo
	Charts []ChartPresence // by first appearance
	// Views has at most one point a step (the highest count read in it)
	// over the video's last recentDays days of readings, and one a day
	// before them, oldest first, whether a chart or tracking read it.
	Views []CountPoint
}

// HistoryStep is the step of a history's view counts: an hour, a minute
// for a video seen over less than two days, a second for less than two
// hours, so that a young history still shows its points.
func HistoryStep(first, last time.Time) time.Duration {
	switch span := last.Sub(first); {
	case span < 2*time.Hour:
		return time.Second
	case span < 48*time.Hour:
		return time.Minute
	}
	return time.Hour
}

// recentDays is how many days, up to a video's last reading, its history
// reads point by point (a point a step, HistoryStep); before them it reads
// one point a day from the daily rollup (video_days), so that a year-long
// history costs a row per chart per day, not one per entry.
const recentDays = 14

const dayMS = 24 * 60 * 60 * 1000

// VideoHistory returns videoID's history since a time (the zero time: all
// of it); ok is false when the video is not stored. Its charts come from
// the daily rollup (video_days) for the whole days since, and from the
// entries themselves (trending_entries_vid) for the part of a day before
// them. Its view counts are a point a step over the video's last
// recentDays days of readings and a point a day before them.
func (db *DB) VideoHistory(ctx context.Context, videoID string, since time.Time) (h History, ok bool, err error) {
	h.Video, ok, err = db.Video(ctx, videoID)
	if err != nil || !ok {
		return h, ok, err
	}
	from := int64(0)
	if !since.IsZero() {
		from = msOf(since)
	}
	if h.Charts, err = db.presence(ctx, videoID, from); err != nil {
		return h, true, fmt.Errorf("history of %s: %w", videoID, err)
	}
	if h.Views, err = db.views(ctx, videoID, from, since, h.Video); err != nil {
		return h, true, fmt.Errorf("history of %s: %w", videoID, err)
	}
	return h, true, nil
}

// nextDay is the first 00:00 UTC at or after ms.
func nextDay(ms int64) int64 { return (ms + dayMS - 1) / dayMS * dayMS }

// presence folds the video's chart entries into one line per chart, by
// first appearance: the entries of the first partial day one by one, the
// whole days after it from the rollup.
func (db *DB) presence(ctx context.Context, videoID string, from int64) ([]ChartPresence, error) {
	f := chartFold{index: map[[2]string]int{}}
	day := nextDay(from)
	rows, err := db.r.QueryContext(ctx, WithDays("?3", AllDays)+`
SELECT e.region, e.category, e.fetched_ms, e.fetched_ms, 1, e.rank, e.rank
FROM trending_entries AS e WHERE `+EntryDay+` = CAST(?2 AS bigint) / 86400000 * 86400000
  AND e.vid = (SELECT vid FROM videos WHERE id = ?1) AND e.fetched_ms >= ?2 AND e.fetched_ms < ?3
UNION ALL
SELECT d.region, d.category, d.first_ms, d.last_ms, d.entries, d.best_rank, d.last_rank
FROM days CROSS JOIN video_days AS d WHERE d.day_ms = days.d AND d.vid = (SELECT vid FROM videos WHERE id = ?1)
  AND d.region <> '' AND d.entries > 0`, videoID, from, day)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var region, category string
		var first, last int64
		var n, best, lastRank int
		if err := rows.Scan(&region, &category, &first, &last, &n, &best, &lastRank); err != nil {
			return nil, err
		}
		f.add(region, category, first, last, n, best, lastRank)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	slices.SortFunc(f.out, byFirstSeen)
	return f.out, nil
}

// byFirstSeen orders charts by first appearance, then by name.
func byFirstSeen(a, b ChartPresence) int {
	return cmp.Or(a.First.Compare(b.First), cmp.Compare(a.Region, b.Region), cmp.Compare(a.Category, b.Category))
}

// chartFold gathers a chart's spans of entries into one ChartPresence.
type chartFold struct {
	out   []ChartPresence
	index map[[2]string]int
}

func (f *chartFold) add(region, category string, first, last int64, n, best, lastRank int) {
	k := [2]string{region, category}
	i, seen := f.index[k]
	if !seen {
		i, f.index[k] = len(f.out), len(f.out)
		f.out = append(f.out, ChartPresence{Region: region, Category: category, First: time.UnixMilli(first).UTC(),
			Last: time.UnixMilli(last).UTC(), BestRank: best, LastRank: lastRank})
	}
	c := &f.out[i]
	if t := time.UnixMilli(first).UTC(); t.Before(c.First) {
		c.First = t
	}
	if t := time.UnixMilli(last).UTC(); !t.Before(c.Last) {
		c.Last, c.LastRank = t, lastRank
	}
	c.BestRank, c.Entries = min(c.BestRank, best), c.Entries+n
}

// views reads the video's counts: a point a step (the highest of each) in
// the part of a day before its first whole day and over its last
// recentDays days of readings, a point a day (the day's highest) between.
func (db *DB) views(ctx context.Context, videoID string, from int64, since time.Time, v StoredVideo) ([]CountPoint, error) {
	var lastStat sql.NullInt64
	if err := db.r.QueryRowContext(ctx, WithDays("0", AllDays)+`SELECT max(s.at_ms) FROM days CROSS JOIN video_stats AS s
WHERE s.day_ms = days.d AND s.vid = (SELECT vid FROM videos WHERE id = ?1)`, videoID).Scan(&lastStat); err != nil {
		return nil, err
	}
	last := max(msOf(v.LastSeen), lastStat.Int64)
	first := v.FirstSeen
	if since.After(first) {
		first = since
	}
	step := HistoryStep(first, time.UnixMilli(last))
	recent := max(from, last/dayMS*dayMS-(recentDays-1)*dayMS)
	daysFrom := min(nextDay(from), recent)
	head, err := db.counts(ctx, videoID, from, daysFrom, step)
	if err != nil {
		return nil, err
	}
	days, err := db.dailyCounts(ctx, videoID, daysFrom, recent)
	if err != nil {
		return nil, err
	}
	tail, err := db.counts(ctx, videoID, recent, 1<<62, step)
	if err != nil {
		return nil, err
	}
	return append(append(head, days...), tail...), nil
}

// counts merges the counts of the video's chart entries and its tracked
// stats read in [from, to), keeping the highest view count of each step.
func (db *DB) counts(ctx context.Context, videoID string, from, to int64, step time.Duration) ([]CountPoint, error) {
	if from >= to {
		return nil, nil
	}
	return countPoints(db.r.QueryContext(ctx, db.q.counts, videoID, step.Milliseconds(), from, to))
}

// dailyCounts reads the highest count of each day in [from, to) from the
// rollup, charts and tracking together.
func (db *DB) dailyCounts(ctx context.Context, videoID string, from, to int64) ([]CountPoint, error) {
	if from >= to {
		return nil, nil
	}
	return countPoints(db.r.QueryContext(ctx, db.q.dailyCounts, videoID, from, to))
}

func countPoints(rows *sql.Rows, err error) ([]CountPoint, error) {
	return scanEach(rows, err, func(rows *sql.Rows) (p CountPoint, err error) {
		var ms int64
		var likes, comments sql.NullInt64
		err = rows.Scan(&ms, &p.Views, &likes, &comments)
		p.At, p.Likes, p.Comments = time.UnixMilli(ms).UTC(), ptr(likes), ptr(comments)
		return p, err
	})
}

// scanEach reads every row with scan, and closes them; err is the query's.
func scanEach[T any](rows *sql.Rows, err error, scan func(*sql.Rows) (T, error)) ([]T, error) {
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []T
	for rows.Next() {
		v, err := scan(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, rows.Err()
}

// RecentEntries returns videoID's last limit trending entries, oldest
// first, and whether it has older ones: what a video page lists, read
// newest first, a span of days at a time down trending_entries_day (a
// day, then two, four...), never the whole history.
func (db *DB) RecentEntries(ctx context.Context, videoID string, limit int) ([]ViewPoint, bool, error) {
	var first, last sql.NullInt64
	err := db.r.QueryRowContext(ctx, `SELECT (SELECT min(day_ms) FROM video_days), (SELECT max(day_ms) FROM video_days)`).
		Scan(&first, &last)
	if err != nil {
		return nil, false, fmt.Errorf("entries of %s: %w", videoID, err)
	}
	var points []ViewPoint
	for to, span := last.Int64+dayMS, int64(dayMS); first.Valid && to > first.Int64 && len(points) <= limit; span *= 2 {
		from := max(first.Int64, to-span)
		rows, err := db.r.QueryContext(ctx, WithDays("?2", "?3")+`
SELECT `+viewPointColumns+`
FROM days CROSS JOIN trending_entries AS e
WHERE `+EntryDay+` = days.d AND e.vid = (SELECT vid FROM videos WHERE id = ?1)
ORDER BY e.fetched_ms DESC, e.run_id DESC, e.region DESC LIMIT ?4`, videoID, from, to, limit+1-len(points))
		got, err := viewPoints(rows, err)
		if err != nil {
			return nil, false, fmt.Errorf("entries of %s: %w", videoID, err)
		}
		points, to = append(points, got...), from
	}
	more := len(points) > limit
	points = points[:min(len(points), limit)]
	slices.Reverse(points)
	return points, more, nil
}

// historyStmts read a video's counts, each database's text: SQLite
// takes the row beside max(), PostgreSQL the first row of DISTINCT ON.
type historyStmts struct{ counts, dailyCounts string }

// pointsSQL are a video's counts (?1) in [?3, ?4): its chart entries'
// and its tracked ones.
var pointsSQL = WithDays("?3", "?4") + `,
v AS (SELECT vid FROM videos WHERE id = ?1),
points (at_ms, views, likes, comments) AS (
  SELECT e.fetched_ms, e.view_count, e.like_count, e.comment_count
  FROM days CROSS JOIN trending_entries AS e WHERE ` + EntryDay + ` = days.d AND e.vid = (SELECT vid FROM v)
    AND e.fetched_ms >= ?3 AND e.fetched_ms < ?4 AND e.view_count IS NOT NULL
  UNION ALL
  SELECT s.at_ms, s.view_count, s.like_count, s.comment_count
  FROM days CROSS JOIN video_stats AS s WHERE s.day_ms = days.d AND s.vid = (SELECT vid FROM v)
    AND s.at_ms >= ?3 AND s.at_ms < ?4 AND s.view_count IS NOT NULL
)`

var (
	sqliteHistorySQL = historyStmts{
		counts: pointsSQL + `
SELECT at_ms, max(views), likes, comments FROM points
GROUP BY at_ms / ?2 ORDER BY at_ms / ?2`,
		dailyCounts: WithDays("?2", "?3") + `
SELECT peak_ms, max(views), likes, comments FROM days CROSS JOIN video_days
WHERE day_ms = days.d AND vid = (SELECT vid FROM videos WHERE id = ?1) AND day_ms >= ?2 AND views IS NOT NULL
GROUP BY day_ms ORDER BY day_ms`,
	}
	pgHistorySQL = historyStmts{
		counts: pointsSQL + `
SELECT DISTINCT ON (at_ms / ?2::bigint) at_ms, views, likes, comments FROM points
ORDER BY at_ms / ?2::bigint, views DESC, at_ms`,
		dailyCounts: WithDays("?2", "?3") + `
SELECT DISTINCT ON (day_ms) peak_ms, views, likes, comments FROM days CROSS JOIN video_days
WHERE day_ms = days.d AND vid = (SELECT vid FROM videos WHERE id = ?1) AND day_ms >= ?2 AND views IS NOT NULL
ORDER BY day_ms, views DESC, peak_ms`,
	}
)

package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Changes is what the readers' data gained since a mark: the charts a run
// started, stored a page in or ended, and the videos stored, refreshed,
// tracked, gone or listed by those runs. A cache in front drops the
// answers that show them, and only those, when the mark moves.
type Changes struct {
	Charts []ChartName
	// New are those of Charts that held no entry before: the list of
	// charts (Charts), which every chart page's picker shows, gained them.
	New    []ChartName
	Videos []string // the upstream's ids, sorted
}

// ChangesSince is what changed after since, the time the data mark said
// before (DataMark): read by the times the mark's time is made of, so
// that what the mark moved for is named once. A row whose time is not
// after since though it was written after that mark was read (a writer's
// clock behind another's, a write that took its time before another's
// and committed after it) is not named.
func (db *DB) ChangesSince(ctx context.Context, since time.Time) (Changes, error) {
	ms := since.UnixMilli()
	var c Changes
	rows, err := db.r.QueryContext(ctx, `SELECT DISTINCT region, category FROM runs
WHERE id > (SELECT max(id) FROM runs) - `+recentRuns+` AND kind = 'trending'
  AND (started_ms > ?1 OR finished_ms > ?1 OR status = 'running')
ORDER BY region, category`, ms)
	if err != nil {
		return c, fmt.Errorf("changes: charts: %w", err)
	}
	for rows.Next() {
		var n ChartName
		if err := rows.Scan(&n.Region, &n.Category); err != nil {
			rows.Close()
			return c, fmt.Errorf("changes: charts: %w", err)
		}
		c.Charts = append(c.Charts, n)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return c, fmt.Errorf("changes: charts: %w", err)
	}
	for _, n := range c.Charts {
		var first int64
		err := db.r.QueryRowContext(ctx, `SELECT started_ms FROM runs
WHERE kind = 'trending' AND region = ? AND category = ? AND videos > 0 ORDER BY id LIMIT 1`, n.Region, n.Category).Scan(&first)
		switch {
		case errors.Is(err, sql.ErrNoRows):
		case err != nil:
			return c, fmt.Errorf("changes: charts: %s: %w", n.Region, err)
		case first > ms:
			c.New = append(c.New, n)
		}
	}
	c.Videos, err = db.changedVideos(ctx, ms)
	return c, err
}

// changedVideos are the ids of the videos stored or refreshed, tracked,
// gone, or listed by a run that started, stored or ended, after ms.
func (db *DB) changedVideos(ctx context.Context, ms int64) ([]string, error) {
	rows, err := db.r.QueryContext(ctx, `SELECT id FROM videos WHERE last_seen_ms > ?1
UNION SELECT v.id FROM videos v JOIN video_stats s ON s.vid = v.vid WHERE s.at_ms > ?1
UNION SELECT v.id FROM videos v JOIN trending_entries e ON e.vid = v.vid
  WHERE e.run_id IN (SELECT id FROM runs WHERE id > (SELECT max(id) FROM runs) - `+recentRuns+`
    AND (started_ms > ?1 OR finished_ms > ?1 OR status = 'running'))
UNION SELECT id FROM videos_gone WHERE gone_ms > ?1`, ms)
	if err != nil {
		return nil, fmt.Errorf("changes: videos: %w", err)
	}
	defer rows.Close()
	var ids []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, fmt.Errorf("changes: videos: %w", err)
		}
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids, rows.Err()
}

// Pruned reports whether the data went from mark before to mark after by
// taking some away (a prune: the oldest run or count moved on, which
// nothing but a prune moves), which ChangesSince does not list: the
// answers that showed it are not found by what is left.
func Pruned(before, after string) bool {
	b, a := strings.Fields(before), strings.Fields(after)
	if len(b) != len(a) {
		return before != after
	}
	for _, i := range []int{1, 7} { // the oldest run, the oldest count (DataMark's order)
		was, _ := strconv.ParseInt(b[i], 10, 64)
		now, _ := strconv.ParseInt(a[i], 10, 64)
		if was != 0 && (now == 0 || now > was) { // the first of them is not a prune
			return true
		}
	}
	return false
}

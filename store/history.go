package store

import (
	"context"
	"database/sql"
	"fmt"
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
	// Views has at most one point a step (the highest count read in it),
	// oldest first, whether a chart or tracking read it.
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

// VideoHistory returns videoID's history since a time (the zero time: all
// of it); ok is false when the video is not stored. It reads the video's own
// entries and stats from since on by their indexes (trending_entries_vid,
// video_stats' key), never a pass over the tables; its cost grows with the
// video's own history in the range (a chart entry is one lookup), which is
// why callers bound it.
func (db *DB) VideoHistory(ctx context.Context, videoID string, since time.Time) (h History, ok bool, err error) {
	h.Video, ok, err = db.Video(ctx, videoID)
	if err != nil || !ok {
		return h, ok, err
	}
	from := msOf(since)
	if since.IsZero() {
		from = 0
	}
	if h.Charts, err = db.presence(ctx, videoID, from); err != nil {
		return h, true, fmt.Errorf("history of %s: %w", videoID, err)
	}
	first := h.Video.FirstSeen
	if since.After(first) {
		first = since
	}
	step := HistoryStep(first, h.Video.LastSeen)
	if h.Views, err = db.counts(ctx, videoID, from, step); err != nil {
		return h, true, fmt.Errorf("history of %s: %w", videoID, err)
	}
	return h, true, nil
}

// presence folds the video's chart entries, oldest first, into one line
// per chart.
func (db *DB) presence(ctx context.Context, videoID string, from int64) ([]ChartPresence, error) {
	rows, err := db.r.QueryContext(ctx, `
SELECT e.region, e.category, e.fetched_ms, e.rank
FROM videos AS v JOIN trending_entries AS e ON e.vid = v.vid
WHERE v.id = ? AND e.fetched_ms >= ? ORDER BY e.fetched_ms`, videoID, from)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []ChartPresence
	index := map[[2]string]int{}
	for rows.Next() {
		var region, category string
		var ms int64
		var rank int
		if err := rows.Scan(&region, &category, &ms, &rank); err != nil {
			return nil, err
		}
		at := time.UnixMilli(ms).UTC()
		k := [2]string{region, category}
		i, seen := index[k]
		if !seen {
			i, index[k] = len(out), len(out)
			out = append(out, ChartPresence{Region: region, Category: category, First: at, BestRank: rank})
		}
		c := &out[i]
		c.Last, c.LastRank, c.Entries = at, rank, c.Entries+1
		c.BestRank = min(c.BestRank, rank)
	}
	return out, rows.Err()
}

// counts merges the counts of the video's chart entries and its tracked
// stats, keeping the highest view count of each step.
func (db *DB) counts(ctx context.Context, videoID string, from int64, step time.Duration) ([]CountPoint, error) {
	rows, err := db.r.QueryContext(ctx, `
WITH v AS (SELECT vid FROM videos WHERE id = ?1),
points (at_ms, views, likes, comments) AS (
  SELECT e.fetched_ms, e.view_count, e.like_count, e.comment_count
  FROM trending_entries AS e WHERE e.vid = (SELECT vid FROM v) AND e.fetched_ms >= ?3
    AND e.view_count IS NOT NULL
  UNION ALL
  SELECT s.at_ms, s.view_count, s.like_count, s.comment_count
  FROM video_stats AS s WHERE s.vid = (SELECT vid FROM v) AND s.at_ms >= ?3 AND s.view_count IS NOT NULL
)
SELECT at_ms, max(views), likes, comments FROM points
GROUP BY at_ms / ?2 ORDER BY at_ms / ?2`, videoID, step.Milliseconds(), from)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []CountPoint
	for rows.Next() {
		var p CountPoint
		var ms int64
		var likes, comments sql.NullInt64
		if err := rows.Scan(&ms, &p.Views, &likes, &comments); err != nil {
			return nil, err
		}
		p.At, p.Likes, p.Comments = time.UnixMilli(ms).UTC(), ptr(likes), ptr(comments)
		out = append(out, p)
	}
	return out, rows.Err()
}

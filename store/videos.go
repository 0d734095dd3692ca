package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"time"

	"github.com/ingestworks/ingest"
)

// ViewPoint is a video's counts in one trending run.
type ViewPoint struct {
	RunID    int64
	Region   string
	Category string // the run's chart: "" the unfiltered one
	At       time.Time
	Rank     int
	Views    int64
	Likes    *int64 // nil: hidden
	Comments *int64 // nil: hidden
}

// ViewHistory returns videoID's trending entries, oldest first; none when
// the video never trended.
func (db *DB) ViewHistory(ctx context.Context, videoID string) ([]ViewPoint, error) {
	rows, err := db.r.QueryContext(ctx, `
SELECT e.run_id, e.region, e.category, e.fetched_ms, e.rank, coalesce(e.view_count, 0),
  e.like_count, e.comment_count
FROM videos AS v JOIN trending_entries AS e ON e.vid = v.vid
WHERE v.id = ? ORDER BY e.fetched_ms, e.run_id, e.region`, videoID)
	if err != nil {
		return nil, fmt.Errorf("view history of %s: %w", videoID, err)
	}
	defer rows.Close()
	var points []ViewPoint
	for rows.Next() {
		var p ViewPoint
		var at int64
		var likes, comments sql.NullInt64
		if err := rows.Scan(&p.RunID, &p.Region, &p.Category, &at, &p.Rank, &p.Views, &likes, &comments); err != nil {
			return nil, fmt.Errorf("view history of %s: %w", videoID, err)
		}
		p.At, p.Likes, p.Comments = time.UnixMilli(at).UTC(), ptr(likes), ptr(comments)
		points = append(points, p)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("view history of %s: %w", videoID, err)
	}
	return points, nil
}

// StoredVideo is a video's latest metadata with when it was first and last
// seen.
type StoredVideo struct {
	ingest.Video
	FirstSeen, LastSeen time.Time
}

// Video returns the latest metadata of videoID; ok is false when it is not
// stored.
func (db *DB) Video(ctx context.Context, videoID string) (v StoredVideo, ok bool, err error) {
	var tags string
	var pub, views, likes, comments sql.NullInt64
	var first, last int64
	err = db.r.QueryRowContext(ctx, `
SELECT id, title, description, tags, channel_id, channel_title, category_id,
  published_at_ms, duration, view_count, like_count, comment_count,
  first_seen_ms, last_seen_ms
FROM videos WHERE id = ?`, videoID).Scan(&v.ID, &v.Title, &v.Description, &tags,
		&v.ChannelID, &v.ChannelTitle, &v.CategoryID, &pub, &v.Duration, &views,
		&likes, &comments, &first, &last)
	if err == sql.ErrNoRows {
		return v, false, nil
	}
	if err == nil {
		err = json.Unmarshal([]byte(tags), &v.Tags)
	}
	if err != nil {
		return v, false, fmt.Errorf("video %s: %w", videoID, err)
	}
	v.PublishedAt = timeOf(pub)
	v.ViewCount, v.LikeCount, v.CommentCount = ptr(views), ptr(likes), ptr(comments)
	v.FirstSeen, v.LastSeen = time.UnixMilli(first).UTC(), time.UnixMilli(last).UTC()
	return v, true, nil
}

func ptr(n sql.NullInt64) *int64 {
	if !n.Valid {
		return nil
	}
	return &n.Int64
}

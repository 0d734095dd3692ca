package store

import (
	"context"
	"fmt"

	"github.com/ingestworks/ingest"
)

// statRow is one video's counts as SaveStats carries them to SQLite.
type statRow struct {
	ID       string `json:"id"`
	At       int64  `json:"at"`
	Views    int64  `json:"views"`
	Likes    *int64 `json:"likes"`
	Comments *int64 `json:"comments"`
}

// SaveStats stores counts read by videos.batchGetStats in the video_stats
// time series, in one transaction and one statement. Counts of a video the
// database does not hold are dropped (tracking reads only videos it has
// seen); reading the same moment twice keeps the later answer.
func (db *DB) SaveStats(ctx context.Context, stats []ingest.VideoStats) error {
	if len(stats) == 0 {
		return nil
	}
	rows := make([]statRow, len(stats))
	for i, s := range stats {
		rows[i] = statRow{ID: s.ID, At: msOf(s.At), Views: s.ViewCount, Likes: s.LikeCount, Comments: s.CommentCount}
	}
	js, err := marshal(rows)
	if err != nil {
		return fmt.Errorf("save stats of %d videos: %w", len(stats), err)
	}
	_, err = db.w.ExecContext(ctx, `
INSERT INTO video_stats (vid, at_ms, view_count, like_count, comment_count)
SELECT v.vid, j.o->>'at', j.o->>'views', j.o->>'likes', j.o->>'comments'
FROM (SELECT value AS o FROM json_each(?1) LIMIT -1) AS j
JOIN videos AS v ON v.id = j.o->>'id' WHERE true
ON CONFLICT (vid, at_ms) DO UPDATE SET view_count = excluded.view_count,
  like_count = excluded.like_count, comment_count = excluded.comment_count`, js)
	if err != nil {
		return fmt.Errorf("save stats of %d videos: %w", len(stats), err)
	}
	return nil
}

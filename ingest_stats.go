package ingest

import "time"

// VideoStats is what videos.batchGetStats says of one video at one moment.
// It lets a job follow the counts of videos it already holds at one unit of
// the stats pool per 50 videos, without spending the default pool.
type VideoStats struct {
	ID        string
	ViewCount int64
	// LikeCount and CommentCount are nil when the owner hides them: absent
	// is not zero.
	LikeCount    *int64
	CommentCount *int64
	// At is when the counts were read: the response carries no time of its
	// own.
	At time.Time
}

// Charted is a video some chart showed lately, and the regions whose
// charts showed it: tracking reads its counts at the cadence of the best
// tier among them.
type Charted struct {
	ID      string
	Regions []string
}

package store

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
)

// DataMark changes whenever what the readers' pages show may have: a run
// started, stored a page, ended or was pruned (as ChartsMark), a video was
// stored or refreshed (the newest last_seen) or pruned (the oldest), its
// counts tracked or pruned (the ends of video_stats by time), or a video
// went (the tombstones). Each part is an end of an index or a count of a
// few rows, so a reader can ask for it often and rebuild what it keeps
// only when the mark moved.
func (db *DB) DataMark(ctx context.Context) (string, error) {
	var v [9]sql.NullInt64
	err := db.r.QueryRowContext(ctx, `SELECT (SELECT max(id) FROM runs), (SELECT min(id) FROM runs),
  (SELECT count(*) FROM runs WHERE status = 'running'), (SELECT sum(videos) FROM runs WHERE status = 'running'),
  (SELECT max(last_seen_ms) FROM videos), (SELECT min(last_seen_ms) FROM videos),
  (SELECT max(at_ms) FROM video_stats), (SELECT min(at_ms) FROM video_stats),
  (SELECT count(*) FROM videos_gone)`).Scan(&v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &v[6], &v[7], &v[8])
	if err != nil {
		return "", fmt.Errorf("data mark: %w", err)
	}
	parts := make([]string, len(v))
	for i, n := range v {
		parts[i] = fmt.Sprint(n.Int64)
	}
	return strings.Join(parts, " "), nil
}

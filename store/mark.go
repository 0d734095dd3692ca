package store

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"time"
)

// DataMark changes whenever what the readers' pages show may have: a run
// started, stored a page, ended or was pruned (as ChartsMark), a video was
// stored or refreshed (the newest last_seen) or pruned (the oldest), its
// counts tracked or pruned (the ends of video_stats by time), or a video
// went (the tombstones). Each part is an end of an index or a count of a
// few rows, so a reader can ask for it often and rebuild what it keeps
// only when the mark moved.
//
// changed is when the data the mark covers last changed, read in the same
// statement so that it is the mark's: the latest start or end of a recent
// run, store of a video, read of its counts or tombstone. It is the
// pages' Last-Modified, the same from every server on the database; a
// prune, which only takes away, leaves it.
func (db *DB) DataMark(ctx context.Context) (mark string, changed time.Time, err error) {
	var v [9]sql.NullInt64
	var at [3]sql.NullInt64
	st, err := db.markStmt(ctx)
	if err != nil {
		return "", time.Time{}, fmt.Errorf("data mark: %w", err)
	}
	err = st.QueryRowContext(ctx).Scan(&v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &v[6], &v[7], &v[8],
		&at[0], &at[1], &at[2])
	if err != nil {
		return "", time.Time{}, fmt.Errorf("data mark: %w", err)
	}
	parts := make([]string, len(v))
	for i, n := range v {
		parts[i] = fmt.Sprint(n.Int64)
	}
	last := max(v[4].Int64, v[6].Int64, at[0].Int64, at[1].Int64, at[2].Int64)
	return strings.Join(parts, " "), time.UnixMilli(last).UTC(), nil
}

// markSQL is DataMark's statement.
const markSQL = `SELECT (SELECT max(id) FROM runs), (SELECT min(id) FROM runs),
  (SELECT count(*) FROM runs WHERE status = 'running'), (SELECT sum(videos) FROM runs WHERE status = 'running'),
  (SELECT max(last_seen_ms) FROM videos), (SELECT min(last_seen_ms) FROM videos),
  (SELECT max(at_ms) FROM video_stats), (SELECT min(at_ms) FROM video_stats),
  (SELECT count(*) FROM videos_gone),
  (SELECT max(started_ms) FROM runs WHERE id > (SELECT max(id) FROM runs) - ` + recentRuns + `),
  (SELECT max(finished_ms) FROM runs WHERE id > (SELECT max(id) FROM runs) - ` + recentRuns + `),
  (SELECT max(gone_ms) FROM videos_gone)`

// markStmt is DataMark's statement, prepared once on the read pool: the
// site's watcher and its readers ask for the mark many times a minute,
// and the statement takes longer to compile than to run.
func (db *DB) markStmt(ctx context.Context) (*sql.Stmt, error) {
	db.markMu.Lock()
	defer db.markMu.Unlock()
	if db.mark != nil {
		return db.mark, nil
	}
	st, err := db.r.PrepareContext(ctx, markSQL)
	if err != nil {
		return nil, err
	}
	db.mark = st
	return st, nil
}

// recentRuns is how many of the newest runs DataMark reads the ends of: a
// run ends long before that many more have started, and the read stays a
// range of the key whatever the runs kept.
const recentRuns = "10000"

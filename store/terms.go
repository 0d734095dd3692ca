package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/ingestworks/ingest"
)

// What the upstream's terms ask of the store (docs/terms.md): how far back
// its data reaches, what a retention would remove, the videos to fetch
// again before their text is too old, and the videos the upstream no longer
// returns.

// Held is how far back the upstream's data in the database reaches: the
// oldest of each kind, zero when there is none.
type Held struct {
	Stat     time.Time // the oldest chart run kept, or tracked count
	Video    time.Time // the video whose text was fetched longest ago
	Search   time.Time // the oldest backfill result
	Category time.Time // the oldest category name
}

// Held reads how far back the data reaches, by index: cheap at any size.
func (db *DB) Held(ctx context.Context) (Held, error) {
	var runs, stats, videos, search, cats sql.NullInt64
	err := db.r.QueryRowContext(ctx, `SELECT
  (SELECT min(started_ms) FROM runs WHERE kind = 'trending' AND started_ms > 0),
  (SELECT min(at_ms) FROM video_stats), (SELECT min(last_seen_ms) FROM videos),
  (SELECT min(fetched_ms) FROM search_results), (SELECT min(fetched_ms) FROM categories)`).
		Scan(&runs, &stats, &videos, &search, &cats)
	if err != nil {
		return Held{}, fmt.Errorf("how far back the data reaches: %w", err)
	}
	h := Held{Stat: timeOf(runs), Video: timeOf(videos), Search: timeOf(search), Category: timeOf(cats)}
	if s := timeOf(stats); !s.IsZero() && (h.Stat.IsZero() || s.Before(h.Stat)) {
		h.Stat = s
	}
	return h, nil
}

// ToRefresh returns the ids of up to limit videos whose text was fetched
// before before and that kept rows still show (a chart entry, a backfill
// result, a tracked count): those to fetch again by id, oldest first.
func (db *DB) ToRefresh(ctx context.Context, before time.Time, limit int) ([]string, error) {
	rows, err := db.r.QueryContext(ctx, `SELECT v.id FROM videos AS v WHERE v.last_seen_ms < ?
  AND (EXISTS (SELECT 1 FROM trending_entries AS e WHERE e.vid = v.vid)
    OR EXISTS (SELECT 1 FROM search_results AS s WHERE s.vid = v.vid)
    OR EXISTS (SELECT 1 FROM video_stats AS st WHERE st.vid = v.vid))
ORDER BY v.last_seen_ms LIMIT ?`, msOf(before), limit)
	if err != nil {
		return nil, fmt.Errorf("videos to refresh: %w", err)
	}
	defer rows.Close()
	var ids []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, fmt.Errorf("videos to refresh: %w", err)
		}
		ids = append(ids, id)
	}
	return ids, rows.Err()
}

// Refreshed stores videos fetched again by id at at: their text and
// counts, as a chart's page would, with no entry and no region.
func (db *DB) Refreshed(ctx context.Context, videos []ingest.Video, at time.Time) error {
	if len(videos) == 0 {
		return nil
	}
	js, err := pageJSON(ingest.Page{Videos: videos, Number: 1}, db.d.withDoc())
	if err == nil {
		err = db.inTx(ctx, func(tx *sql.Tx) error {
			if _, err := tx.StmtContext(ctx, db.st.upsertVideos).ExecContext(ctx, js, msOf(at)); err != nil || db.st.docs == nil {
				return err
			}
			_, err := tx.StmtContext(ctx, db.st.docs).ExecContext(ctx, js, msOf(at))
			return err
		})
	}
	if err != nil {
		return fmt.Errorf("store %d refreshed videos: %w", len(videos), err)
	}
	return nil
}

// GoneAt returns when a refresh found video id gone upstream; the zero
// time when it did not, or the video is back.
func (db *DB) GoneAt(ctx context.Context, id string) (time.Time, error) {
	var ms sql.NullInt64
	err := db.r.QueryRowContext(ctx, `SELECT gone_ms FROM videos_gone AS g WHERE id = ?
  AND NOT EXISTS (SELECT 1 FROM videos AS v WHERE v.id = g.id)`, id).Scan(&ms)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return time.Time{}, fmt.Errorf("video %s gone: %w", id, err)
	}
	return timeOf(ms), nil
}

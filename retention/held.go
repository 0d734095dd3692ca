package retention

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/ingestworks/ingest/store"
)

// Held is how far back the upstream's data in the database reaches: the
// oldest of each kind, zero when there is none.
type Held struct {
	Stat     time.Time // the oldest chart run kept, or tracked count
	Video    time.Time // the video whose text was fetched longest ago
	Search   time.Time // the oldest backfill result
	Category time.Time // the oldest category name
}

// ReadHeld reads how far back the data reaches, by index: cheap at any size.
func ReadHeld(ctx context.Context, db *store.DB) (Held, error) {
	var runs, stats, videos, search, cats sql.NullInt64
	err := db.Reader().QueryRowContext(ctx, `SELECT
  (SELECT min(started_ms) FROM runs WHERE kind = 'trending' AND started_ms > 0),
  (SELECT min(at_ms) FROM video_stats), (SELECT min(last_seen_ms) FROM videos),
  (SELECT min(fetched_ms) FROM search_results), (SELECT min(fetched_ms) FROM categories)`).
		Scan(&runs, &stats, &videos, &search, &cats)
	if err != nil {
		return Held{}, fmt.Errorf("how far back the data reaches: %w", err)
	}
	h := Held{Stat: heldAt(runs), Video: heldAt(videos), Search: heldAt(search), Category: heldAt(cats)}
	if s := heldAt(stats); !s.IsZero() && (h.Stat.IsZero() || s.Before(h.Stat)) {
		h.Stat = s
	}
	return h, nil
}

func heldAt(ms sql.NullInt64) time.Time {
	if !ms.Valid {
		return time.Time{}
	}
	return time.UnixMilli(ms.Int64).UTC()
}

package store

import (
	"context"
	"database/sql"
	"fmt"
	"sort"
	"strings"
)

// SearchOptions narrow a search.
type SearchOptions struct {
	// Region keeps videos that trended or were found in this region.
	Region string
	// Limit is the number of hits, 20 when zero.
	Limit int
}

// Hit is one video that matched, best first.
type Hit struct {
	ID      string
	Title   string
	Channel string
	// Snippet is the best matching part of the text, with the matched
	// words between [ and ].
	Snippet string
	// Regions where the video trended or was found, sorted.
	Regions []string
	Views   int64
	// Score is the BM25 relevance, higher is better (title matches weigh
	// five times a description match).
	Score float64
}

// The inner query ranks over the index alone and keeps the best rows;
// snippet() is then computed for those few rows only, not for every match.
const searchSQL = `
WITH top AS MATERIALIZED (
  SELECT rowid AS vid, rank FROM videos_fts
  WHERE videos_fts MATCH ?1 %s
  ORDER BY rank LIMIT ?3
)
SELECT v.id, v.title, v.channel_title,
  snippet(videos_fts, -1, '[', ']', '…', 16),
  coalesce(v.view_count, 0), top.rank,
  (SELECT group_concat(region, ' ') FROM video_regions AS r WHERE r.vid = top.vid)
FROM top
JOIN videos_fts ON videos_fts.rowid = top.vid
JOIN videos AS v ON v.vid = top.vid
WHERE videos_fts MATCH ?1
ORDER BY top.rank`

const regionFilter = `AND EXISTS (SELECT 1 FROM video_regions AS r WHERE r.vid = videos_fts.rowid AND r.region = ?2)`

// Search finds videos whose title, description, tags or channel match
// query. Any text is a valid query: see matchExpr. A query with nothing to
// search for returns an error wrapping ErrBadQuery.
func (db *DB) Search(ctx context.Context, query string, opts SearchOptions) ([]Hit, error) {
	expr, err := matchExpr(query)
	if err != nil {
		return nil, err
	}
	if opts.Limit <= 0 {
		opts.Limit = 20
	}
	filter, region := "", strings.ToUpper(strings.TrimSpace(opts.Region))
	if region != "" {
		filter = regionFilter
	}
	rows, err := db.r.QueryContext(ctx, fmt.Sprintf(searchSQL, filter), expr, region, opts.Limit)
	if err != nil {
		return nil, searchErr(query, err)
	}
	defer rows.Close()
	var hits []Hit
	for rows.Next() {
		var h Hit
		var regions sql.NullString
		if err := rows.Scan(&h.ID, &h.Title, &h.Channel, &h.Snippet, &h.Views, &h.Score, &regions); err != nil {
			return nil, searchErr(query, err)
		}
		h.Score = -h.Score // bm25 is better when lower
		h.Regions = strings.Fields(regions.String)
		sort.Strings(h.Regions)
		if h.Regions == nil {
			h.Regions = []string{}
		}
		hits = append(hits, h)
	}
	if err := rows.Err(); err != nil {
		return nil, searchErr(query, err)
	}
	return hits, nil
}

// searchErr hides an FTS5 complaint behind ErrBadQuery: matchExpr should
// leave none, and a user cannot act on SQL.
func searchErr(query string, err error) error {
	if strings.Contains(err.Error(), "fts5") {
		return fmt.Errorf("%w: cannot search for %q; try plain words", ErrBadQuery, query)
	}
	return fmt.Errorf("search %q: %w", query, err)
}

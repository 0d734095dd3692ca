package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
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
	// Score is the BM25 relevance, higher is better (a title match weighs
	// five times a description match); zero for the hits of a broad query
	// (see RankWindow), which are ordered by title match, then views.
	Score float64
}

// RankWindow separates narrow queries from broad ones. BM25 needs, for
// every term, the number of videos that contain it, and FTS5 counts them by
// walking the term's whole doclist: two words that nearly every video has
// took 130 ms at 200,000 videos. A query matching more than RankWindow
// videos is broad: its hits are the RankWindow most recently first-seen
// matches (FTS5 walks its doclists backwards without scoring): those whose
// title matches, most viewed first, then the others, most recent first.
const RankWindow = 5000

// windowSQL finds the lowest rowid of a broad query's window; no row for a
// narrow query.
const windowSQL = `
SELECT rowid FROM videos_fts WHERE videos_fts MATCH ?1 %s
ORDER BY rowid DESC LIMIT 1 OFFSET ?4`

// rankedSQL ranks a narrow query by BM25 over the index alone.
const rankedSQL = `
SELECT rowid, -rank FROM videos_fts WHERE videos_fts MATCH ?1 %s
ORDER BY rank LIMIT ?3`

// broadSQL returns a broad query's title matches in the window, most viewed
// first, then its other matches, most recent first: both walk a doclist
// and stop early, where a view count per match would cost a row lookup
// each. ?4 is the window's lowest rowid, ?5 the query restricted to titles.
const broadSQL = `
WITH titled AS MATERIALIZED (
  SELECT videos_fts.rowid AS vid, coalesce(v.view_count, 0) AS views
  FROM videos_fts JOIN videos AS v ON v.vid = videos_fts.rowid
  WHERE videos_fts MATCH ?5 AND videos_fts.rowid >= ?4 %[1]s
  ORDER BY views DESC LIMIT ?3
),
rest AS MATERIALIZED (
  SELECT rowid AS vid FROM videos_fts
  WHERE videos_fts MATCH ?1 AND rowid >= ?4 %[1]s AND rowid NOT IN (SELECT vid FROM titled)
  ORDER BY rowid DESC LIMIT ?3
)
SELECT vid, 0.0 FROM (
  SELECT vid, row_number() OVER (ORDER BY views DESC) AS pos FROM titled
  UNION ALL
  SELECT vid, ?3 + row_number() OVER (ORDER BY vid DESC) FROM rest)
ORDER BY pos LIMIT ?3`

// detailsSQL reads the stored text of the ranked videos: the snippet is
// marked over it, as it was sent.
const detailsSQL = `
SELECT v.vid, v.id, v.title, v.description, v.tags, v.channel_title,
  coalesce(v.view_count, 0),
  (SELECT group_concat(region, ' ') FROM video_regions AS r WHERE r.vid = v.vid)
FROM videos AS v WHERE v.vid IN (SELECT value FROM json_each(?1))`

const regionFilter = `AND EXISTS (SELECT 1 FROM video_regions AS r WHERE r.vid = videos_fts.rowid AND r.region = ?2)`

// Search finds videos whose title, description, tags or channel match
// query. Any text is a valid query: see parseQuery. A query with nothing to
// search for returns an error wrapping ErrBadQuery.
func (db *DB) Search(ctx context.Context, query string, opts SearchOptions) ([]Hit, error) {
	pq, err := parseQuery(query)
	if err != nil {
		return nil, err
	}
	if opts.Limit <= 0 {
		opts.Limit = 20
	}
	region := strings.ToUpper(strings.TrimSpace(opts.Region))
	ranked, err := db.rank(ctx, pq.expr, region, opts.Limit)
	if err != nil {
		return nil, searchErr(query, err)
	}
	hits, err := db.details(ctx, ranked, pq.marks)
	if err != nil {
		return nil, searchErr(query, err)
	}
	return hits, nil
}

// scored is a matching video and its score, best first.
type scored struct {
	vid   int64
	score float64
}

// rank runs the ranked or the broad search, by the number of matches.
func (db *DB) rank(ctx context.Context, expr, region string, limit int) ([]scored, error) {
	filter := ""
	if region != "" {
		filter = regionFilter
	}
	var lo int64
	var rows *sql.Rows
	err := db.r.QueryRowContext(ctx, fmt.Sprintf(windowSQL, filter), expr, region, limit, db.rankWindow-1).Scan(&lo)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		rows, err = db.r.QueryContext(ctx, fmt.Sprintf(rankedSQL, filter), expr, region, limit)
	case err == nil:
		rows, err = db.r.QueryContext(ctx, fmt.Sprintf(broadSQL, filter), expr, region, limit, lo,
			"title : ("+expr+")")
	}
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []scored
	for rows.Next() {
		var s scored
		if err := rows.Scan(&s.vid, &s.score); err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, rows.Err()
}

// details reads the ranked videos and marks their snippets.
func (db *DB) details(ctx context.Context, ranked []scored, marks []mark) ([]Hit, error) {
	if len(ranked) == 0 {
		return nil, nil
	}
	vids := make([]int64, len(ranked))
	for i, s := range ranked {
		vids[i] = s.vid
	}
	list, _ := json.Marshal(vids)
	rows, err := db.r.QueryContext(ctx, detailsSQL, string(list))
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	byVid := make(map[int64]Hit, len(ranked))
	for rows.Next() {
		var vid int64
		var h Hit
		var desc, tags string
		var regions sql.NullString
		if err := rows.Scan(&vid, &h.ID, &h.Title, &desc, &tags, &h.Channel, &h.Views, &regions); err != nil {
			return nil, err
		}
		h.Regions = strings.Fields(regions.String)
		sort.Strings(h.Regions)
		if h.Regions == nil {
			h.Regions = []string{}
		}
		h.Snippet = snippet([]string{h.Title, desc, tagList(tags), h.Channel}, marks)
		byVid[vid] = h
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	hits := make([]Hit, 0, len(ranked))
	for _, s := range ranked {
		if h, ok := byVid[s.vid]; ok {
			h.Score = s.score
			hits = append(hits, h)
		}
	}
	return hits, nil
}

// tagList writes the stored JSON array of tags as the text a snippet shows.
func tagList(js string) string {
	var tags []string
	if json.Unmarshal([]byte(js), &tags) != nil {
		return js
	}
	return strings.Join(tags, ", ")
}

// searchErr hides an FTS5 complaint behind ErrBadQuery: matchExpr should
// leave none, and a user cannot act on SQL.
func searchErr(query string, err error) error {
	if strings.Contains(err.Error(), "fts5") {
		return fmt.Errorf("%w: cannot search for %q; try plain words", ErrBadQuery, query)
	}
	return fmt.Errorf("search %q: %w", query, err)
}

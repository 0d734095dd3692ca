package store

import "fmt"

// pgSQL is PostgreSQL's text of the statements whose SQL differs from
// SQLite's: json_array_elements for json_each, greatest and least for the
// scalar max and min, string_agg for group_concat, an upsert's conflict
// target (which PostgreSQL requires), DISTINCT ON for SQLite's bare
// columns beside max(), the search index (a tsvector: pgsearch.go), and
// types PostgreSQL cannot infer for a parameter. A page's rows are
// upserted in key order, so that two hosts storing pages that share videos
// take their row locks in one order.
var pgSQL = &dialectSQL{
	upsertVideos: videoUpsert("SELECT DISTINCT ON (o->>'id')",
		"FROM jsonb_array_elements(?1::jsonb) WITH ORDINALITY AS j (o, n)\nORDER BY o->>'id', n DESC", "?2::bigint",
		func(f VideoField) string {
			if f.kind == countField || f.kind == timeField {
				return "(o->>'" + f.Column + "')::bigint"
			}
			return "o->>'" + f.Column + "'"
		}, "videos."),

	addRegions: `
INSERT INTO video_regions (vid, region)
SELECT v.vid, ?2::text FROM jsonb_array_elements(?1::jsonb) AS j (o) JOIN videos AS v ON v.id = j.o->>'id'
WHERE ?2::text <> '' ORDER BY v.vid
ON CONFLICT DO NOTHING`,

	addTrending: `
INSERT INTO trending_entries (run_id, region, vid, rank, view_count, like_count,
  comment_count, fetched_ms, category)
SELECT DISTINCT ON (v.vid) ?2::bigint, ?3::text, v.vid, (j.o->>'rank')::bigint, (j.o->>'view_count')::bigint,
  (j.o->>'like_count')::bigint, (j.o->>'comment_count')::bigint, ?4::bigint, (SELECT category FROM runs WHERE id = ?2::bigint)
FROM jsonb_array_elements(?1::jsonb) WITH ORDINALITY AS j (o, n)
JOIN videos AS v ON v.id = j.o->>'id'
ORDER BY v.vid, j.n DESC
ON CONFLICT (run_id, region, vid) DO UPDATE SET
  rank = excluded.rank, view_count = excluded.view_count,
  like_count = excluded.like_count, comment_count = excluded.comment_count,
  fetched_ms = excluded.fetched_ms`,

	addSearch: `
INSERT INTO search_results (run_id, region, vid, rank, fetched_ms)
SELECT DISTINCT ON (v.vid) ?2::bigint, ?3::text, v.vid, (j.o->>'rank')::bigint, ?4::bigint
FROM jsonb_array_elements(?1::jsonb) WITH ORDINALITY AS j (o, n)
JOIN videos AS v ON v.id = j.o->>'id'
ORDER BY v.vid, j.n DESC
ON CONFLICT (run_id, region, vid) DO UPDATE SET
  rank = excluded.rank, fetched_ms = excluded.fetched_ms`,

	bumpTrending: pgBump("trending_entries"),
	bumpSearch:   pgBump("search_results"),

	saveCategory: `
INSERT INTO categories (region, id, title, fetched_ms) VALUES (?1, ?2, ?3, ?4)
ON CONFLICT (region, id) DO UPDATE SET title = excluded.title`,
	categoryFetched: `
INSERT INTO category_fetches (region, fetched_ms) VALUES (?1, ?2)
ON CONFLICT (region) DO UPDATE SET fetched_ms = excluded.fetched_ms`,

	chartTrend: `
SELECT e.run_id, e.vid, e.rank, coalesce(e.view_count, 0)
FROM trending_entries AS e
WHERE e.run_id IN (SELECT jsonb_array_elements_text(?1::jsonb)::bigint) AND e.region = ?2
ORDER BY e.run_id`,

	chartPeaks: `
SELECT vid, min(rank), sum(days) FROM (
  SELECT vid, min(best_rank) AS rank, count(*) AS days FROM video_days
  WHERE vid IN (SELECT jsonb_array_elements_text(?1::jsonb)::bigint) AND region = ?2 AND category = ?3
    AND entries > 0 AND day_ms < ?5
  GROUP BY vid
  UNION ALL
  SELECT vid, min(rank), 1 FROM trending_entries
  WHERE vid IN (SELECT jsonb_array_elements_text(?1::jsonb)::bigint) AND fetched_ms >= ?5 AND fetched_ms < ?4
    AND region = ?2 AND category = ?3
  GROUP BY vid) AS p
GROUP BY vid`,

	videoCategories: `SELECT id, category_id FROM videos
WHERE id IN (SELECT jsonb_array_elements_text(?1::jsonb))`,

	counts: `
WITH v AS (SELECT vid FROM videos WHERE id = ?1),
points (at_ms, views, likes, comments) AS (
  SELECT e.fetched_ms, e.view_count, e.like_count, e.comment_count
  FROM trending_entries AS e WHERE e.vid = (SELECT vid FROM v) AND e.fetched_ms >= ?3 AND e.fetched_ms < ?4
    AND e.view_count IS NOT NULL
  UNION ALL
  SELECT s.at_ms, s.view_count, s.like_count, s.comment_count
  FROM video_stats AS s WHERE s.vid = (SELECT vid FROM v) AND s.at_ms >= ?3 AND s.at_ms < ?4
    AND s.view_count IS NOT NULL
)
SELECT DISTINCT ON (at_ms / ?2::bigint) at_ms, views, likes, comments FROM points
ORDER BY at_ms / ?2::bigint, views DESC, at_ms`,

	dailyCounts: `
SELECT DISTINCT ON (day_ms) peak_ms, views, likes, comments FROM video_days
WHERE vid = (SELECT vid FROM videos WHERE id = ?1) AND day_ms >= ?2 AND day_ms < ?3 AND views IS NOT NULL
ORDER BY day_ms, views DESC, peak_ms`,

	saveStats: `
INSERT INTO video_stats (vid, at_ms, view_count, like_count, comment_count)
SELECT DISTINCT ON (v.vid, (j.o->>'at')::bigint) v.vid, (j.o->>'at')::bigint, (j.o->>'views')::bigint,
  (j.o->>'likes')::bigint, (j.o->>'comments')::bigint
FROM jsonb_array_elements(?1::jsonb) WITH ORDINALITY AS j (o, n)
JOIN videos AS v ON v.id = j.o->>'id'
ORDER BY v.vid, (j.o->>'at')::bigint, j.n DESC
ON CONFLICT (vid, at_ms) DO UPDATE SET view_count = excluded.view_count,
  like_count = excluded.like_count, comment_count = excluded.comment_count`,

	details: `
SELECT ` + videoColumns + `, v.vid,
  (SELECT string_agg(region, ' ') FROM video_regions AS r WHERE r.vid = v.vid)
FROM videos AS v WHERE v.vid IN (SELECT jsonb_array_elements_text(?1::jsonb)::bigint)`,

	docs:      pgDocsSQL,
	lockBatch: ` FOR UPDATE SKIP LOCKED`,
	videoRows: append(videoRowTables[:len(videoRowTables):len(videoRowTables)], "video_docs"),
	ranked: pgSearch(`SELECT vid, ts_rank(doc, ?1::tsquery)::float8 AS score FROM video_docs WHERE doc @@ ?1::tsquery %s
ORDER BY score DESC, vid DESC LIMIT ?3`),
	newest: pgSearch(`SELECT vid, 0.0::float8 FROM video_docs WHERE doc @@ ?1::tsquery %s
ORDER BY vid DESC LIMIT ?3`),
	titled: pgSearch(`SELECT vid, 0.0::float8 FROM video_docs WHERE title @@ ?1::tsquery %s
ORDER BY vid DESC LIMIT ?3`),
	count:     pgCount,
	export:    func(where string) string { return fmt.Sprintf(pgExportSQL, where) },
	exportDay: func(where string) string { return fmt.Sprintf(pgExportDaySQL, where) },
}

// pgBump is bumpTrendingSQL or bumpSearchSQL for the entries' table.
func pgBump(table string) string {
	return `
UPDATE runs SET pages = greatest(pages, ?2), videos = videos + (
  SELECT count(DISTINCT j.o->>'id') FROM jsonb_array_elements(?3::jsonb) AS j (o)
  WHERE NOT EXISTS (SELECT 1 FROM videos AS v JOIN ` + table + ` AS e ON e.vid = v.vid
                    WHERE v.id = j.o->>'id' AND e.run_id = ?1 AND e.region = ?4))
WHERE id = ?1`
}

// pgSearch fills a search statement's %s with its filters. Without a
// region it tests that the unused parameter is empty (PostgreSQL must know
// each parameter's type). The region filter is a lexeme of
// video_docs.regions (?2, quoted by tsLexeme), in the same GIN index as
// the words, so the server intersects the two lists.
func pgSearch(q string) func(searchFilter) string {
	return searchVariants(q, `AND regions @@ ?2::tsquery`, `AND ?2::text = ''`,
		`AND EXISTS (SELECT 1 FROM videos AS v WHERE v.vid = video_docs.vid AND `+languageMatch+`)`)
}

// pgCount counts a search's matches. Without a region, the count asks for
// the newest matches, though their order does not matter to it, so that
// the planner may walk the videos newest first and stop at the limit when
// the words are common: without an order it reads every match's entry in
// the index first. In one region the matches are few enough to read from
// the index, and the walk, which passes the other regions' videos, costs
// more.
func pgCount(f searchFilter) string {
	if f.inRegion {
		return pgCountInRegion(f)
	}
	return pgCountAll(f)
}

var (
	pgCountInRegion = pgSearch(`SELECT count(*) FROM (SELECT vid FROM video_docs WHERE doc @@ ?1::tsquery %s
  LIMIT ?3) AS m`)
	pgCountAll = pgSearch(`SELECT count(*) FROM (SELECT vid FROM video_docs WHERE doc @@ ?1::tsquery %s
  ORDER BY vid DESC LIMIT ?3) AS m`)
)

// pgExportSQL is exportSQL on PostgreSQL, where the order is taken on the
// entries' narrow columns and each row's video is read after it. Prepared
// once and planned for any range, the flat join sorts the rows whole,
// videos' text and all, on disk; here the sort holds a few numbers a row
// and the lateral read (which the planner cannot turn into a hash join)
// keeps that order. The kind is fixed by the filter, so the order leaves
// it out, as it must for the planner to see the rows arrive sorted.
var pgExportSQL = `
SELECT ` + videoColumns + `, d.started_ms / 1000 * 1000, d.view_count, d.like_count, d.comment_count,
  d.region, d.category, d.rank, d.id
FROM (
  SELECT r.started_ms, r.id, r.region, r.category, e.rank, e.vid, e.view_count, e.like_count, e.comment_count
  FROM runs AS r
  JOIN trending_entries AS e ON e.run_id = r.id
  WHERE %s
  ORDER BY r.started_ms, r.id, e.rank) AS d
CROSS JOIN LATERAL (SELECT * FROM videos AS v WHERE v.vid = d.vid OFFSET 0) AS v
ORDER BY d.started_ms, d.id, d.rank`

// pgExportDaySQL is exportDaySQL on PostgreSQL: the row of each video's
// last run of the day by DISTINCT ON, where SQLite takes it beside max(),
// over the entries' narrow columns before the join to videos.
// Its placeholders stay ?, numbered in order with the filter's.
var pgExportDaySQL = `
SELECT ` + videoColumns + `, ?::bigint, d.view_count, d.like_count, d.comment_count,
  d.region, d.category, d.rank, d.run_id
FROM (
  SELECT DISTINCT ON (r.region, r.category, e.vid) r.region, r.category, e.vid, e.view_count,
    e.like_count, e.comment_count, e.rank, r.id AS run_id
  FROM runs AS r
  JOIN trending_entries AS e ON e.run_id = r.id
  WHERE %s
  ORDER BY r.region, r.category, e.vid, r.id DESC) AS d
JOIN videos AS v ON v.vid = d.vid
ORDER BY d.region, d.category, d.rank, v.id`

// pgDocsSQL keeps PostgreSQL's search index (video_docs) in step with the
// videos a page stored, in the page's transaction, as SQLite's triggers
// keep FTS5's: a video the page did not update (a later page had stored it
// already) keeps its words, and unchanged words are not written again. It
// runs before the page's regions are stored: a trigger on video_regions
// adds each new one to the video's row (migrations/postgres/0002_search_columns.sql).
const pgDocsSQL = `
INSERT INTO video_docs (vid, doc)
SELECT DISTINCT ON (v.vid) v.vid, (j.o->>'doc')::tsvector
FROM jsonb_array_elements(?1::jsonb) WITH ORDINALITY AS j (o, n)
JOIN videos AS v ON v.id = j.o->>'id' AND v.last_seen_ms = ?2::bigint
ORDER BY v.vid, j.n DESC
ON CONFLICT (vid) DO UPDATE SET doc = excluded.doc WHERE video_docs.doc <> excluded.doc`

package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"
)

// SearchOptions narrow a search.
type SearchOptions struct {
	// Region keeps videos that trended or were found in this region.
	Region string
	// Language keeps videos in this language (see Language).
	Language string
	// Limit is the number of hits, 20 when zero.
	Limit int
}

// Hit is one video that matched, best first: the video as every reader
// reads it (videoColumns), and what the search adds.
type Hit struct {
	StoredVideo
	// Snippet is the best matching part of the text, with the matched
	// words between [ and ].
	Snippet string
	// Regions where the video trended or was found, sorted.
	Regions []string
	// Score is the BM25 relevance, higher is better (a title match weighs
	// five times a description match); zero for the hits of a broad query
	// (see RankWindow).
	Score float64
}

// RankWindow separates narrow queries from broad ones. BM25 needs, for
// every term, the number of videos that contain it, and FTS5 counts them by
// walking the term's whole doclist, which for words nearly every video has
// costs more than the rest of a search; telling the two apart stops after
// RankWindow matches. A query matching fewer than RankWindow videos is
// ranked by BM25 (on PostgreSQL by ts_rank). A broader one is ranked by
// what can be read from the index while walking it newest first and
// stopping early:
//
//  1. videos whose title matches the whole query, best title first: the
//     broadCandidates most recent such videos, scored in Go by a BM25 over
//     their titles alone (every term of a broad query is common, so its
//     weight is about the same: what tells titles apart is how often the
//     words occur and how short the title is, "Arsenal highlights" before
//     "Top 10 derby goals of the season with Arsenal");
//  2. then the other matches, most recently first seen (what trends now).
//
// Ordering by views instead would cost a row lookup per match.
const RankWindow = 1000

// broadCandidates is how many title matches of a broad query are scored,
// per hit asked for.
const broadCandidates = 2

// rankedSQL ranks a narrow query by BM25 over the index alone, the oldest
// first on a tie (as FTS5's own sort leaves them). Ordered by rank alone,
// FTS5 would sort the matches itself, scoring every one of them before the
// region filter drops most; ordered by more, it leaves the sort to SQLite,
// which scores only the matches the filter keeps.
const rankedSQL = `
SELECT rowid, -rank FROM videos_fts WHERE videos_fts MATCH ?1 %s
ORDER BY rank, rowid LIMIT ?3`

// newestSQL walks a query's matches newest first and stops after ?3.
const newestSQL = `
SELECT rowid, 0.0 FROM videos_fts WHERE videos_fts MATCH ?1 %s
ORDER BY rowid DESC LIMIT ?3`

// titledSQL is newestSQL kept to the videos' titles.
const titledSQL = `
SELECT rowid, 0.0 FROM videos_fts WHERE videos_fts MATCH 'title : (' || ?1 || ')' %s
ORDER BY rowid DESC LIMIT ?3`

// countSQL counts a query's matches, stopping after ?3: on SQLite the
// index alone, walked in rowid order.
const countSQL = `
SELECT count(*) FROM (SELECT rowid FROM videos_fts WHERE videos_fts MATCH ?1 %s LIMIT ?3)`

// searchStmts are a search's statements, each database's text: an index
// walk that ranks, one newest first, one over titles, a count, each for
// the filters a search sets (searchFilter); and details, the ranked
// videos (videoColumns, then the row and the regions), whose snippet is
// marked over their stored text, as it was sent.
type searchStmts struct {
	details                       string
	ranked, newest, titled, count func(searchFilter) string
}

var (
	sqliteSearchSQL = searchStmts{
		details: `
SELECT ` + videoColumns + `, v.vid,
  (SELECT group_concat(region, ' ') FROM video_regions AS r WHERE r.vid = v.vid)
FROM videos AS v WHERE v.vid IN (SELECT value FROM json_each(?1))`,
		ranked: sqliteSearch(rankedSQL), newest: sqliteSearch(newestSQL), titled: sqliteSearch(titledSQL),
		count: sqliteSearch(countSQL),
	}
	pgSearchSQL = searchStmts{
		details: `
SELECT ` + videoColumns + `, v.vid,
  (SELECT string_agg(region, ' ') FROM video_regions AS r WHERE r.vid = v.vid)
FROM videos AS v WHERE v.vid IN (SELECT jsonb_array_elements_text(?1::jsonb)::bigint)`,
		ranked: pgSearch(`SELECT vid, ts_rank(doc, ?1::tsquery)::float8 AS score FROM video_docs WHERE doc @@ ?1::tsquery %s
ORDER BY score DESC, vid DESC LIMIT ?3`),
		newest: pgSearch(`SELECT vid, 0.0::float8 FROM video_docs WHERE doc @@ ?1::tsquery %s
ORDER BY vid DESC LIMIT ?3`),
		titled: pgSearch(`SELECT vid, 0.0::float8 FROM video_docs WHERE title @@ ?1::tsquery %s
ORDER BY vid DESC LIMIT ?3`),
		count: pgCount,
	}
)

// regionFilter keeps SQLite's search to the videos charted in a region.
const regionFilter = `AND EXISTS (SELECT 1 FROM video_regions AS r WHERE r.vid = videos_fts.rowid AND r.region = ?2)`

// sqliteSearch fills a search statement's %s with the filters a search
// sets, or nothing.
func sqliteSearch(q string) func(searchFilter) string {
	return searchVariants(q, regionFilter, "",
		`AND EXISTS (SELECT 1 FROM videos AS v WHERE v.vid = videos_fts.rowid AND `+languageMatch+`)`)
}

// searchVariants writes a search statement for each pair of filters, once:
// its %s is the region's filter (noRegion when it has none) and the
// language's.
func searchVariants(q, region, noRegion, language string) func(searchFilter) string {
	var v [2][2]string
	for r, rf := range []string{noRegion, region} {
		for l, lf := range []string{"", language} {
			v[r][l] = fmt.Sprintf(q, strings.TrimSpace(rf+" "+lf))
		}
	}
	return func(f searchFilter) string {
		return v[b2i(f.inRegion)][b2i(f.language != "")]
	}
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
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

// searchFilter is what keeps a search to a region and a language: the
// dialect's statements add each filter that is set (dialectSQL.ranked and
// the others).
type searchFilter struct {
	inRegion bool
	region   string // the argument of the region filter: on PostgreSQL a tsquery of video_docs.regions
	language string // Language's tag, "" none
}

// filter is the search filter of opts.
func (db *DB) filter(opts SearchOptions) (searchFilter, error) {
	var f searchFilter
	if region := strings.ToUpper(strings.TrimSpace(opts.Region)); region != "" {
		f.inRegion, f.region = true, db.d.regionArg(region)
	}
	var err error
	f.language, err = Language(opts.Language)
	return f, err
}

// args are the arguments of a search statement: ?1 the query, ?2 the
// region, ?3 the limit, and ?4 and ?5 the language's when it filters.
func (f searchFilter) args(expr string, limit int) []any {
	args := []any{expr, f.region, limit}
	if f.language != "" {
		args = append(args, languageArgs(f.language)...)
	}
	return args
}

// Search finds videos whose title, description, tags or channel match
// query. Any text is a valid query: see parseQuery. A query with nothing to
// search for returns an error wrapping ErrBadQuery.
func (db *DB) Search(ctx context.Context, query string, opts SearchOptions) ([]Hit, error) {
	hits, _, err := db.SearchCounted(ctx, query, opts, 0)
	return hits, err
}

// SearchCounted is Search that also counts the videos query matches (in
// opts.Region), up to more than most: a count above most says "more than
// most". The count is the one that tells a narrow query from a broad one
// (RankWindow), so it costs nothing more.
func (db *DB) SearchCounted(ctx context.Context, query string, opts SearchOptions, most int) ([]Hit, int, error) {
	pq, err := parseQuery(query)
	if err != nil {
		return nil, 0, err
	}
	if opts.Limit <= 0 {
		opts.Limit = 20
	}
	f, err := db.filter(opts)
	if err != nil {
		return nil, 0, err
	}
	var n int
	err = db.r.QueryRowContext(ctx, db.q.count(f), f.args(db.match(pq), max(most+1, db.rankWindow))...).Scan(&n)
	var hits []Hit
	switch {
	case err != nil:
	case n < db.rankWindow:
		hits, err = db.ranked(ctx, pq, f, opts.Limit)
	default:
		hits, err = db.broad(ctx, pq, f, opts.Limit)
	}
	if err != nil {
		return nil, 0, searchErr(query, err)
	}
	return hits, n, nil
}

// scored is a matching video and its score, best first.
type scored struct {
	vid   int64
	score float64
}

// ranked returns a narrow query's best hits by BM25.
func (db *DB) ranked(ctx context.Context, pq parsedQuery, f searchFilter, limit int) ([]Hit, error) {
	top, err := db.matches(ctx, db.q.ranked(f), f.args(db.match(pq), limit))
	if err != nil {
		return nil, err
	}
	hits, err := db.details(ctx, top)
	return withSnippets(hits, pq.marks), err
}

// broad returns a broad query's hits (see RankWindow): its recent title
// matches, best title first, then its other matches, newest first.
func (db *DB) broad(ctx context.Context, pq parsedQuery, f searchFilter, limit int) ([]Hit, error) {
	titled, err := db.matches(ctx, db.q.titled(f), f.args(db.match(pq), broadCandidates*limit))
	if err != nil {
		return nil, err
	}
	hits, err := db.details(ctx, titled)
	if err != nil {
		return nil, err
	}
	byTitle(hits, pq.marks)
	if len(hits) >= limit {
		return withSnippets(hits[:limit], pq.marks), nil
	}
	rest, err := db.matches(ctx, db.q.newest(f), f.args(db.match(pq), limit+len(titled)))
	if err != nil {
		return nil, err
	}
	seen := make(map[int64]bool, len(titled))
	for _, s := range titled {
		seen[s.vid] = true
	}
	rest = slices.DeleteFunc(rest, func(s scored) bool { return seen[s.vid] })
	more, err := db.details(ctx, rest[:min(len(rest), limit-len(hits))])
	return withSnippets(append(hits, more...), pq.marks), err
}

// matches runs a query of the index that returns rowids and scores.
func (db *DB) matches(ctx context.Context, q string, args []any) ([]scored, error) {
	rows, err := db.r.QueryContext(ctx, q, args...)
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

// byTitle orders hits by a BM25 over their titles alone (k1 1.2, b 0.75,
// every term weighing the same), newest first on a tie; the hits keep a
// score of zero, since the weights are not comparable with a narrow
// query's.
func byTitle(hits []Hit, marks []mark) {
	scores := make([]float64, len(hits))
	total := 0
	lens := make([]int, len(hits))
	tfs := make([][]int, len(hits))
	for i, h := range hits {
		toks := wordTokens(h.Title)
		lens[i], total = len(toks), total+len(toks)
		tfs[i] = make([]int, len(marks))
		for _, t := range toks {
			for k, m := range marks {
				if m.matches(t.Text) {
					tfs[i][k]++
				}
			}
		}
	}
	avg := float64(max(total, 1)) / float64(max(len(hits), 1))
	for i := range hits {
		for _, tf := range tfs[i] {
			f := float64(tf)
			scores[i] += f * 2.2 / (f + 1.2*(0.25+0.75*float64(lens[i])/avg))
		}
	}
	idx := make([]int, len(hits))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return scores[idx[a]] > scores[idx[b]] })
	sorted := make([]Hit, len(hits))
	for i, k := range idx {
		sorted[i] = hits[k]
	}
	copy(hits, sorted)
}

// details reads the ranked videos, in their order.
func (db *DB) details(ctx context.Context, ranked []scored) ([]Hit, error) {
	if len(ranked) == 0 {
		return nil, nil
	}
	vids := make([]int64, len(ranked))
	for i, s := range ranked {
		vids[i] = s.vid
	}
	list, _ := json.Marshal(vids)
	rows, err := db.r.QueryContext(ctx, db.q.details, string(list))
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	byVid := make(map[int64]Hit, len(ranked))
	var vid int64
	var regions sql.NullString
	s := newVideoScanner(&vid, &regions)
	for rows.Next() {
		var f Hit
		var err error
		if f.StoredVideo, err = s.scan(rows); err != nil {
			return nil, err
		}
		f.Regions = strings.Fields(regions.String)
		sort.Strings(f.Regions)
		if f.Regions == nil {
			f.Regions = []string{}
		}
		byVid[vid] = f
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	out := make([]Hit, 0, len(ranked))
	for _, s := range ranked {
		if f, ok := byVid[s.vid]; ok {
			f.Score = s.score
			out = append(out, f)
		}
	}
	return out, nil
}

// withSnippets cuts the snippet of each hit from its stored text; no hits
// are an empty list, not nil.
func withSnippets(hits []Hit, marks []mark) []Hit {
	if hits == nil {
		hits = []Hit{}
	}
	for i := range hits {
		h := &hits[i]
		h.Snippet = snippet([]string{h.Title, h.Description, strings.Join(h.Tags, ", "), h.ChannelTitle}, marks)
	}
	return hits
}

// match is the query as the store's index takes it: an FTS5 expression,
// or on PostgreSQL a tsquery (pgsearch.go).
func (db *DB) match(pq parsedQuery) string { return db.d.match(pq) }

// searchErr hides an FTS5 complaint behind ErrBadQuery: parseQuery should
// leave none, and a user cannot act on SQL.
func searchErr(query string, err error) error {
	if strings.Contains(err.Error(), "fts5") || strings.Contains(err.Error(), "tsquery") {
		return fmt.Errorf("%w: cannot search for %q; try plain words", ErrBadQuery, query)
	}
	return fmt.Errorf("search %q: %w", query, err)
}

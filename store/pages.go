package store

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/ingestworks/ingest"
)

// PageSize is the number of results the upstream puts on a full page; the
// rank of a video is its position on its page plus PageSize for every page
// before it.
const PageSize = 50

// statements are prepared once on the write connection and bound to each
// transaction with Tx.StmtContext, which reuses them.
type statements struct {
	upsertVideos, addRegions *sql.Stmt
	addEntries, bumpRun      map[ingest.PageKind]*sql.Stmt
	runKind                  *sql.Stmt
	docs                     *sql.Stmt // the index where no trigger keeps it: pageStmts.docs
	saveStats                *sql.Stmt // statsStmts.saveStats: tracking stores a batch at every slot
}

// pageStmts are a page's statements (SavePage), each database's text.
// docs, PostgreSQL's alone, keeps its search index in step with the
// videos a page stored, in the page's transaction, as SQLite's triggers
// keep FTS5's.
type pageStmts struct {
	upsertVideos, addRegions, addTrending, addSearch, bumpTrending, bumpSearch, docs string
}

// sqlitePageSQL: a page goes to SQLite as one JSONB array (jsonb.go) and
// is stored by one statement per table: FTS5 flushes its pending terms at
// every statement, so one statement per page instead of one per video is
// what makes new videos cheap to index. Handed over as JSONB, the page is
// parsed by none of its statements. "SELECT value AS o ... LIMIT -1" reads
// each element once: without it every o->>'field' would convert the
// element back to text. jsonb_each, not json_each, hands each element on
// as JSONB, which o->>'field' reads without parsing the element's text
// again for every field. The videos' statement is made from the table of
// their fields.
var sqlitePageSQL = pageStmts{
	upsertVideos: videoUpsert("SELECT", "FROM (SELECT value AS o FROM jsonb_each(?1) LIMIT -1) WHERE true", "?2",
		func(f VideoField) string { return "o->>'" + f.Column + "'" }, ""),
	addRegions: `
INSERT INTO video_regions (vid, region)
SELECT v.vid, ?2 FROM jsonb_each(?1) AS j JOIN videos AS v ON v.id = j.value->>'id'
WHERE ?2 <> ''
ON CONFLICT DO NOTHING`,
	addTrending: `
INSERT INTO trending_entries (run_id, region, vid, rank, view_count, like_count,
  comment_count, fetched_ms, category)
SELECT ?2, ?3, v.vid, j.o->>'rank', j.o->>'view_count', j.o->>'like_count', j.o->>'comment_count', ?4,
  (SELECT category FROM runs WHERE id = ?2)
FROM (SELECT value AS o FROM jsonb_each(?1) LIMIT -1) AS j
JOIN videos AS v ON v.id = j.o->>'id' WHERE true` + trendingUpsert,
	addSearch: `
INSERT INTO search_results (run_id, region, vid, rank, fetched_ms)
SELECT ?2, ?3, v.vid, j.value->>'rank', ?4
FROM jsonb_each(?1) AS j JOIN videos AS v ON v.id = j.value->>'id' WHERE true
ON CONFLICT (run_id, region, vid) DO UPDATE SET
  rank = excluded.rank, fetched_ms = excluded.fetched_ms`,
	bumpTrending: bump("trending_entries", "max", "jsonb_each(?3) AS j", "j.value->>'id'"),
	bumpSearch:   bump("search_results", "max", "jsonb_each(?3) AS j", "j.value->>'id'"),
}

// pgPageSQL: PostgreSQL's text needs jsonb_array_elements for json_each,
// an upsert's conflict target, DISTINCT ON where a page holds a video
// twice, and types it cannot infer for a parameter. A page's rows are
// upserted in key order, so that two hosts storing pages that share
// videos take their row locks in one order. Its index (docs) keeps the
// words of a video the page did not update (a later page had stored it
// already), and does not write unchanged words again; it runs before the
// page's regions are stored: a trigger on video_regions adds each new one
// to the video's row (migrations/postgres/0002_search_columns.sql).
var pgPageSQL = pageStmts{
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
ORDER BY v.vid, j.n DESC` + trendingUpsert,
	addSearch: `
INSERT INTO search_results (run_id, region, vid, rank, fetched_ms)
SELECT DISTINCT ON (v.vid) ?2::bigint, ?3::text, v.vid, (j.o->>'rank')::bigint, ?4::bigint
FROM jsonb_array_elements(?1::jsonb) WITH ORDINALITY AS j (o, n)
JOIN videos AS v ON v.id = j.o->>'id'
ORDER BY v.vid, j.n DESC
ON CONFLICT (run_id, region, vid) DO UPDATE SET
  rank = excluded.rank, fetched_ms = excluded.fetched_ms`,
	bumpTrending: bump("trending_entries", "greatest", "jsonb_array_elements(?3::jsonb) AS j (o)", "j.o->>'id'"),
	bumpSearch:   bump("search_results", "greatest", "jsonb_array_elements(?3::jsonb) AS j (o)", "j.o->>'id'"),
	docs: `
INSERT INTO video_docs (vid, doc)
SELECT DISTINCT ON (v.vid) v.vid, (j.o->>'doc')::tsvector
FROM jsonb_array_elements(?1::jsonb) WITH ORDINALITY AS j (o, n)
JOIN videos AS v ON v.id = j.o->>'id' AND v.last_seen_ms = ?2::bigint
ORDER BY v.vid, j.n DESC
ON CONFLICT (vid) DO UPDATE SET doc = excluded.doc WHERE video_docs.doc <> excluded.doc`,
}

// trendingUpsert is what a chart's entry stored again updates: its counts
// as the last page read them, and the rank it was first met at. A video
// the chart pushed from one page to the next while they were read is met
// twice; keeping its first rank leaves the place it took on the later page
// empty, below that page's last rank, where the run's lost ranks are found
// (lostRanks), whatever the place: a rank lost at a page's end could not
// be told from a short page.
const trendingUpsert = `
ON CONFLICT (run_id, region, vid) DO UPDATE SET
  rank = CASE WHEN excluded.rank < trending_entries.rank THEN excluded.rank ELSE trending_entries.rank END,
  view_count = excluded.view_count,
  like_count = excluded.like_count, comment_count = excluded.comment_count,
  fetched_ms = excluded.fetched_ms`

// bump counts a page into its run, before the page's entries (in table)
// are added: videos counts the entries the page adds, and pages is the
// highest page number (greatest is the database's scalar max), so that
// storing a page twice counts it once. elements are the page's videos, id
// the video's id in one.
func bump(table, greatest, elements, id string) string {
	return `
UPDATE runs SET pages = ` + greatest + `(pages, ?2), videos = videos + (
  SELECT count(DISTINCT ` + id + `) FROM ` + elements + `
  WHERE NOT EXISTS (SELECT 1 FROM videos AS v JOIN ` + table + ` AS e ON e.vid = v.vid
                    WHERE v.id = ` + id + ` AND e.run_id = ?1 AND e.region = ?4))
WHERE id = ?1`
}

func prepare(ctx context.Context, w *sql.DB, q *dialectSQL) (*statements, error) {
	st := &statements{
		addEntries: map[ingest.PageKind]*sql.Stmt{},
		bumpRun:    map[ingest.PageKind]*sql.Stmt{},
	}
	var err error
	p := func(q string) *sql.Stmt {
		if err != nil {
			return nil
		}
		var s *sql.Stmt
		s, err = w.PrepareContext(ctx, q)
		return s
	}
	st.upsertVideos = p(q.upsertVideos)
	st.addRegions = p(q.addRegions)
	st.addEntries[ingest.Trending] = p(q.addTrending)
	st.addEntries[ingest.Search] = p(q.addSearch)
	st.bumpRun[ingest.Trending] = p(q.bumpTrending)
	st.bumpRun[ingest.Search] = p(q.bumpSearch)
	st.runKind = p(`SELECT kind FROM runs WHERE id = ?`)
	st.saveStats = p(q.saveStats)
	if q.docs != "" {
		st.docs = p(q.docs)
	}
	if err != nil {
		st.close()
		return nil, fmt.Errorf("prepare: %w", err)
	}
	return st, nil
}

func (st *statements) close() {
	for _, s := range []*sql.Stmt{st.upsertVideos, st.addRegions, st.runKind, st.docs, st.saveStats,
		st.addEntries[ingest.Trending], st.addEntries[ingest.Search],
		st.bumpRun[ingest.Trending], st.bumpRun[ingest.Search]} {
		if s != nil {
			s.Close()
		}
	}
}

// SavePage stores one page in one transaction: the videos' latest metadata
// (and so the FTS index), the page's trending entries or search results,
// and the run's page and video counts. Storing the same page again changes
// only counts and times.
func (db *DB) SavePage(ctx context.Context, runID int64, page ingest.Page) error {
	err := db.inTx(ctx, func(tx *sql.Tx) error { return db.savePage(ctx, tx, runID, page) })
	if err != nil {
		return fmt.Errorf("save %s page %d of run %d: %w", page.Region, page.Number, runID, err)
	}
	return nil
}

func (db *DB) savePage(ctx context.Context, tx *sql.Tx, runID int64, page ingest.Page) error {
	if page.Kind != ingest.Trending && page.Kind != ingest.Search {
		return fmt.Errorf("unknown page kind %q", page.Kind)
	}
	var kind string
	err := tx.StmtContext(ctx, db.st.runKind).QueryRowContext(ctx, runID).Scan(&kind)
	if errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("no run %d", runID)
	} else if err != nil {
		return err
	}
	if kind != string(page.Kind) {
		return fmt.Errorf("a %s page cannot be stored in %s run %d", page.Kind, kind, runID)
	}
	if page.Fetched.IsZero() {
		// The fetch's time is the house clock's, which the store has not.
		return fmt.Errorf("%s page %d of run %d has no Fetched time", page.Kind, page.Number, runID)
	}
	js, err := db.d.pageRows(page)
	if err != nil {
		return err
	}
	defer releaseRows(js)
	if _, err := tx.StmtContext(ctx, db.st.bumpRun[page.Kind]).ExecContext(ctx, runID, page.Number, js, page.Region); err != nil {
		return err
	}
	if len(page.Videos) == 0 {
		return nil
	}
	at := page.Fetched
	type step struct {
		s    *sql.Stmt
		args []any
	}
	steps := []step{
		{db.st.upsertVideos, []any{js, msOf(at)}},
		{db.st.addEntries[page.Kind], []any{js, runID, page.Region, msOf(at)}},
	}
	if db.st.docs != nil {
		steps = append(steps, step{db.st.docs, []any{js, msOf(at)}})
	}
	steps = append(steps, step{db.st.addRegions, []any{js, page.Region}})
	for _, step := range steps {
		if _, err := tx.StmtContext(ctx, step.s).ExecContext(ctx, step.args...); err != nil {
			return err
		}
	}
	return nil
}

// pageJSON writes a page's videos as the databases' statements read them:
// one object per video with the table's columns by name (fields.go), then
// its rank; withDoc readies the rows for PostgreSQL (pgText, SearchDoc).
func pageJSON(page ingest.Page, withDoc bool) (string, error) {
	first := (max(page.Number, 1) - 1) * PageSize
	// A Builder hands its bytes on without a copy, grown once to about the
	// page's size; each value is encoded into one scratch buffer reused.
	var b strings.Builder
	b.Grow(pageJSONSize(page.Videos))
	var scratch bytes.Buffer
	enc := json.NewEncoder(&scratch)
	enc.SetEscapeHTML(false) // the text is indexed as it is
	value := func(x any) error {
		scratch.Reset()
		if err := enc.Encode(x); err != nil {
			return err
		}
		b.Write(scratch.Bytes()[:scratch.Len()-1]) // without Encode's newline
		return nil
	}
	b.WriteByte('[')
	for i := range page.Videos {
		v := &page.Videos[i]
		if v.ID == "" {
			return "", fmt.Errorf("video %d on the page has no id", i+1)
		}
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteByte('{')
		for j, f := range videoFields {
			if j > 0 {
				b.WriteByte(',')
			}
			b.WriteString(`"` + f.Column + `":`)
			x, err := pageValue(f, v, withDoc)
			if err != nil {
				return "", err
			}
			if err := value(x); err != nil {
				return "", err
			}
		}
		b.WriteString(`,"rank":`)
		b.WriteString(strconv.Itoa(first + i + 1))
		if withDoc {
			b.WriteString(`,"doc":`)
			if err := value(SearchDoc(v)); err != nil {
				return "", err
			}
		}
		b.WriteByte('}')
	}
	b.WriteByte(']')
	return b.String(), nil
}

// pageJSONSize is about the bytes of videos' page JSON: their text, and room
// for the names and the numbers.
func pageJSONSize(videos []ingest.Video) int {
	n := 2
	for i := range videos {
		v := &videos[i]
		n += 400 + len(v.ID) + len(v.Title) + len(v.Description) + len(v.ChannelID) + len(v.ChannelTitle) +
			len(v.Thumbnail) + len(v.Duration)
		for _, t := range v.Tags {
			n += len(t) + 8
		}
	}
	return n
}

// pageValue is field f of v as the page's JSON carries it: text, a count
// or null, milliseconds or null, tags as the text of a JSON array.
func pageValue(f VideoField, v *ingest.Video, withDoc bool) (any, error) {
	text := func(s string) string {
		if withDoc {
			return pgText(s)
		}
		return s
	}
	switch x := f.Value(v).(type) {
	case string:
		return text(x), nil
	case *int64:
		return x, nil
	case time.Time:
		if x.IsZero() {
			return nil, nil
		}
		return x.UnixMilli(), nil
	case []string:
		tags, err := tagsJSON(x)
		return text(tags), err
	default:
		return nil, fmt.Errorf("video field %s: no page value of %T", f.Column, x)
	}
}

func tagsJSON(tags []string) (string, error) {
	if tags == nil {
		tags = []string{}
	}
	return marshal(tags)
}

// marshal encodes without HTML escaping: the text is indexed as it is.
func marshal(v any) (string, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return "", err
	}
	return strings.TrimSuffix(b.String(), "\n"), nil
}

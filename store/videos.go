package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/ingestworks/ingest"
)

// ViewPoint is a video's counts in one trending run.
type ViewPoint struct {
	RunID    int64
	Region   string
	Category string // the run's chart: "" the unfiltered one
	At       time.Time
	Rank     int
	Views    *int64 // nil: hidden
	Likes    *int64 // nil: hidden
	Comments *int64 // nil: hidden
}

// viewPointColumns are what viewPoints scans of a trending entry (AS e).
const viewPointColumns = `e.run_id, e.region, e.category, e.fetched_ms, e.rank, e.view_count,
  e.like_count, e.comment_count`

// viewPoints reads trending entries (viewPointColumns) as ViewPoints.
func viewPoints(rows *sql.Rows, err error) ([]ViewPoint, error) {
	return scanEach(rows, err, func(rows *sql.Rows) (p ViewPoint, err error) {
		var at int64
		var views, likes, comments sql.NullInt64
		err = rows.Scan(&p.RunID, &p.Region, &p.Category, &at, &p.Rank, &views, &likes, &comments)
		p.At, p.Views, p.Likes, p.Comments = time.UnixMilli(at).UTC(), ptr(views), ptr(likes), ptr(comments)
		return p, err
	})
}

// StoredVideo is a video's latest metadata with when it was first and last
// seen.
type StoredVideo struct {
	ingest.Video
	FirstSeen, LastSeen time.Time
}

// scanVideo reads videoColumns, then the row's further columns into more.
func scanVideo(row interface{ Scan(...any) error }, more ...any) (StoredVideo, error) {
	return newVideoScanner(more...).scan(row)
}

// videoScanner holds the destinations of videoColumns (one per field of
// the table, fields.go) and of a reader's further columns, made once for
// a query and used row after row: a reader that reads many rows (an
// export reads one per entry) allocates nothing per row but what the row
// itself holds.
type videoScanner struct {
	v           StoredVideo
	counts      []scanned[sql.NullInt64, *int64]
	times       []scanned[sql.NullInt64, time.Time]
	tags        []scanned[string, []string]
	first, last int64
	dest        []any
}

// scanned is a column read into src and converted into the video's dst.
type scanned[S, D any] struct {
	src *S
	dst *D
}

// newVideoScanner is a scanner of videoColumns followed by more.
func newVideoScanner(more ...any) *videoScanner {
	s := &videoScanner{dest: make([]any, 0, len(videoFields)+2+len(more))}
	rv := reflect.ValueOf(&s.v.Video).Elem()
	for _, f := range videoFields {
		field := rv.FieldByIndex(f.index).Addr().Interface()
		switch f.kind {
		case textField:
			s.dest = append(s.dest, field)
		case countField:
			c := scanned[sql.NullInt64, *int64]{new(sql.NullInt64), field.(**int64)}
			s.counts, s.dest = append(s.counts, c), append(s.dest, c.src)
		case timeField:
			t := scanned[sql.NullInt64, time.Time]{new(sql.NullInt64), field.(*time.Time)}
			s.times, s.dest = append(s.times, t), append(s.dest, t.src)
		case tagsField:
			t := scanned[string, []string]{new(string), field.(*[]string)}
			s.tags, s.dest = append(s.tags, t), append(s.dest, t.src)
		}
	}
	s.dest = append(append(s.dest, &s.first, &s.last), more...)
	return s
}

// scan reads one row: the video is returned, the further columns are in
// the destinations given to newVideoScanner.
func (s *videoScanner) scan(row interface{ Scan(...any) error }) (StoredVideo, error) {
	s.v = StoredVideo{}
	if err := row.Scan(s.dest...); err != nil {
		return s.v, err
	}
	for _, t := range s.tags {
		tags, err := decodeTags(*t.src)
		if err != nil {
			return s.v, fmt.Errorf("tags: %w", err)
		}
		*t.dst = tags
	}
	for _, t := range s.times {
		*t.dst = timeOf(*t.src)
	}
	if len(s.counts) > 0 {
		n := make([]int64, len(s.counts)) // one allocation for the row's counts
		for i, c := range s.counts {
			if c.src.Valid {
				n[i] = c.src.Int64
				*c.dst = &n[i]
			}
		}
	}
	s.v.FirstSeen, s.v.LastSeen = time.UnixMilli(s.first).UTC(), time.UnixMilli(s.last).UTC()
	return s.v, nil
}

// Video returns the latest metadata of videoID; ok is false when it is not
// stored.
func (db *DB) Video(ctx context.Context, videoID string) (StoredVideo, bool, error) {
	v, err := scanVideo(db.r.QueryRowContext(ctx, `SELECT `+videoColumns+` FROM videos AS v WHERE v.id = ?`, videoID))
	if errors.Is(err, sql.ErrNoRows) {
		return v, false, nil
	}
	if err != nil {
		return v, false, fmt.Errorf("video %s: %w", videoID, err)
	}
	return v, true, nil
}

// decodeTags reads a video's tags as the store writes them, a JSON array
// of strings. Every reader of a video decodes them, once per row an export
// writes, so a plain array (no escapes, no control characters, valid
// UTF-8) is cut out of the text without a copy; anything else goes
// through encoding/json, which also words the error.
func decodeTags(s string) ([]string, error) {
	if tags, ok := plainTags(s); ok {
		return tags, nil
	}
	var tags []string
	err := json.Unmarshal([]byte(s), &tags)
	return tags, err
}

// plainTags is decodeTags' fast path; ok is false when s is not a plain
// array of plain strings.
func plainTags(s string) (tags []string, ok bool) {
	s = trimJSONSpace(s)
	if len(s) < 2 || s[0] != '[' || s[len(s)-1] != ']' {
		return nil, false
	}
	rest := trimJSONSpace(s[1 : len(s)-1])
	if rest == "" {
		return []string{}, true
	}
	tags = make([]string, 0, strings.Count(rest, `"`)/2)
	for {
		if len(rest) == 0 || rest[0] != '"' {
			return nil, false
		}
		end := 1
		for end < len(rest) && rest[end] != '"' {
			if c := rest[end]; c == '\\' || c < 0x20 {
				return nil, false
			}
			end++
		}
		if end == len(rest) || !utf8.ValidString(rest[1:end]) {
			return nil, false
		}
		tags = append(tags, rest[1:end])
		rest = trimJSONSpace(rest[end+1:])
		if rest == "" {
			return tags, true
		}
		if rest[0] != ',' {
			return nil, false
		}
		rest = trimJSONSpace(rest[1:])
	}
}

// trimJSONSpace trims the white space JSON allows between tokens.
func trimJSONSpace(s string) string { return strings.Trim(s, " \t\r\n") }

// ptrs is ptr of three counts with one allocation for the three.
func ptrs(a, b, c sql.NullInt64) (*int64, *int64, *int64) {
	n := new([3]int64)
	n[0], n[1], n[2] = a.Int64, b.Int64, c.Int64
	at := func(i int, v sql.NullInt64) *int64 {
		if !v.Valid {
			return nil
		}
		return &n[i]
	}
	return at(0, a), at(1, b), at(2, c)
}

func ptr(n sql.NullInt64) *int64 {
	if !n.Valid {
		return nil
	}
	return &n.Int64
}

// keptRows holds for a video (v) that a kept row shows: a chart entry, a
// backfill result or a tracked count, the entries and counts sought day by
// day (a statement begun with WithDays over every kept day).
const keptRows = `(EXISTS (SELECT 1 FROM days CROSS JOIN trending_entries AS e WHERE ` + EntryDay + ` = days.d AND e.vid = v.vid)
    OR EXISTS (SELECT 1 FROM search_results AS s WHERE s.vid = v.vid)
    OR EXISTS (SELECT 1 FROM days CROSS JOIN video_stats AS st WHERE st.day_ms = days.d AND st.vid = v.vid))`

// ToRefresh returns the ids of up to limit videos whose text was fetched
// before before and that kept rows still show (a chart entry, a backfill
// result, a tracked count): those to fetch again by id, oldest first.
func (db *DB) ToRefresh(ctx context.Context, before time.Time, limit int) ([]string, error) {
	rows, err := db.r.QueryContext(ctx, WithDays("0", AllDays)+`SELECT v.id FROM videos AS v WHERE v.last_seen_ms < ?1
  AND `+keptRows+`
ORDER BY v.last_seen_ms LIMIT ?2`, msOf(before), limit)
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

// RefreshDue counts the videos ToRefresh would return for before, and
// says when the oldest of them was fetched (zero when none): how far
// behind the refresh is, which it spreads its passes by.
func (db *DB) RefreshDue(ctx context.Context, before time.Time) (int64, time.Time, error) {
	var n int64
	var oldest sql.NullInt64
	err := db.r.QueryRowContext(ctx, WithDays("0", AllDays)+`SELECT count(*), min(v.last_seen_ms) FROM videos AS v
WHERE v.last_seen_ms < ?1 AND `+keptRows, msOf(before)).Scan(&n, &oldest)
	if err != nil {
		return 0, time.Time{}, fmt.Errorf("videos due a refresh: %w", err)
	}
	if !oldest.Valid {
		return n, time.Time{}, nil
	}
	return n, time.UnixMilli(oldest.Int64).UTC(), nil
}

// Refreshed stores videos fetched again by id at at: their text and
// counts, as a chart's page would, with no entry and no region.
func (db *DB) Refreshed(ctx context.Context, videos []ingest.Video, at time.Time) error {
	if len(videos) == 0 {
		return nil
	}
	js, err := db.d.pageRows(ingest.Page{Videos: videos, Number: 1})
	if err == nil {
		defer releaseRows(js)
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

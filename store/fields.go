package store

import (
	"fmt"
	"reflect"
	"strings"
	"time"

	"github.com/ingestworks/ingest"
)

// videoFields is a video's fields, each declared once: the videos table's
// column, its type in each database's migrations, the ingest.Video field
// it holds, its name in the JSON card (web.VideoCard) and its column in
// the export. Both databases' upserts of a page, the page's JSON that
// carries the rows to them, the read model's column list and scan
// (videoColumns, videoScanner) and the export's further columns are made
// from it; a test holds it to the migrated schemas, to ingest.Video and
// to the card. A new field of a video is a line here, a migration per
// database, the field in ingest.Video, where the upstream's answer holds it
// (ingest.VideoSources, which every call's fields= is built from) and
// where it is shown (docs/ARCHITECTURE.md).
var videoFields = declare([]VideoField{
	{Column: "id", SQLite: "TEXT", Postgres: "TEXT", Go: "ID", JSON: "id", Export: "video_id", Update: Key},
	{Column: "title", SQLite: "TEXT", Postgres: "TEXT", Go: "Title", JSON: "title", Export: "title"},
	{Column: "description", SQLite: "TEXT", Postgres: "TEXT", Go: "Description", Export: "description"},
	{Column: "tags", SQLite: "TEXT", Postgres: "TEXT", Go: "Tags", Export: "tags"}, // a JSON array of strings
	{Column: "channel_id", SQLite: "TEXT", Postgres: "TEXT", Go: "ChannelID", JSON: "channel_id", Export: "channelId"},
	{Column: "channel_title", SQLite: "TEXT", Postgres: "TEXT", Go: "ChannelTitle", JSON: "channel", Export: "channelTitle"},
	{Column: "category_id", SQLite: "TEXT", Postgres: "TEXT", Go: "CategoryID", Export: "categoryId"},
	{Column: "published_at_ms", SQLite: "INTEGER", Postgres: "BIGINT", Go: "PublishedAt", JSON: "published_at", Export: "publishedAt", Update: KeepIfNull},
	{Column: "duration", SQLite: "TEXT", Postgres: "TEXT", Go: "Duration", JSON: "duration"},
	{Column: "view_count", SQLite: "INTEGER", Postgres: "BIGINT", Go: "ViewCount"},
	{Column: "like_count", SQLite: "INTEGER", Postgres: "BIGINT", Go: "LikeCount"},
	{Column: "comment_count", SQLite: "INTEGER", Postgres: "BIGINT", Go: "CommentCount"},
	{Column: "thumbnail", SQLite: "TEXT", Postgres: "TEXT", Go: "Thumbnail", JSON: "thumbnail", Export: "thumbnail_link", Update: KeepIfEmpty},
	{Column: "audio_language", SQLite: "TEXT", Postgres: "TEXT", Go: "AudioLanguage", JSON: "audio_language", Export: "defaultAudioLanguage"},
	{Column: "language", SQLite: "TEXT", Postgres: "TEXT", Go: "Language", JSON: "language", Export: "defaultLanguage"},
})

// VideoField is one field of a video as the store declares it.
type VideoField struct {
	Column           string // the videos table's column
	SQLite, Postgres string // its type as each database's migrations declare it
	// Go is the ingest.Video field it holds: a string, a *int64 (nil:
	// absent, NULL), a time.Time (milliseconds, NULL when zero) or a
	// []string (a JSON array in a text column).
	Go string
	// JSON is its name in the JSON card every JSON video embeds
	// (web.VideoCard), "" when the card leaves it out.
	JSON string
	// Export is its column in the export ("" when not exported): the
	// dataset's own columns (export/format.go) are laid out by the
	// export, any other is appended after them, in this table's order.
	Export string
	// Update is how storing a page changes it.
	Update Update

	index []int     // in ingest.Video
	kind  fieldKind // of the Go field
}

// Update is how storing a page changes a stored field.
type Update int

const (
	// Replace sets the page's value.
	Replace Update = iota
	// Key is the conflict key: never changed.
	Key
	// KeepIfNull keeps the stored value when the page has none (NULL).
	KeepIfNull
	// KeepIfEmpty keeps the stored value when the page's is "".
	KeepIfEmpty
)

type fieldKind int

const (
	textField  fieldKind = iota // string
	countField                  // *int64
	timeField                   // time.Time, as milliseconds
	tagsField                   // []string, as a JSON array
)

// VideoFields is a copy of the table, for the packages that lay a video
// out (the export's further columns, a test of the JSON card).
func VideoFields() []VideoField { return append([]VideoField(nil), videoFields...) }

// Kind names the Go type of the field: "text", "count", "time" or "tags".
func (f VideoField) Kind() string {
	return [...]string{"text", "count", "time", "tags"}[f.kind]
}

// Value is the field's value in v: a string, a *int64, a time.Time or a
// []string.
func (f VideoField) Value(v *ingest.Video) any {
	return reflect.ValueOf(v).Elem().FieldByIndex(f.index).Interface()
}

// Text is a text field's value in v, read without boxing it (an export
// reads it once a row); "" for a field of another kind.
func (f VideoField) Text(v *ingest.Video) string {
	if f.kind != textField {
		return ""
	}
	return reflect.ValueOf(v).Elem().FieldByIndex(f.index).String()
}

// declare checks the table against ingest.Video: a field that names no
// field of a kind the store knows stops the program at its start, which
// every test of the package does.
func declare(fields []VideoField) []VideoField {
	t := reflect.TypeFor[ingest.Video]()
	seen := map[string]bool{}
	for i := range fields {
		f := &fields[i]
		sf, ok := t.FieldByName(f.Go)
		if !ok {
			panic(fmt.Sprintf("store: video field %s: ingest.Video has no field %s", f.Column, f.Go))
		}
		switch sf.Type {
		case reflect.TypeFor[string]():
			f.kind = textField
		case reflect.TypeFor[*int64]():
			f.kind = countField
		case reflect.TypeFor[time.Time]():
			f.kind = timeField
		case reflect.TypeFor[[]string]():
			f.kind = tagsField
		default:
			panic(fmt.Sprintf("store: video field %s: ingest.Video.%s is a %s, not a string, *int64, time.Time or []string", f.Column, f.Go, sf.Type))
		}
		if seen[f.Column] {
			panic(fmt.Sprintf("store: video field %s declared twice", f.Column))
		}
		seen[f.Column] = true
		f.index = sf.Index
	}
	if fields[0].Update != Key {
		panic("store: the first video field is the key")
	}
	return fields
}

// videoColumns is the one list of a video's columns every reader of a
// whole video selects (over videos AS v), in the order videoScanner reads
// them: the table's, then when the video was first and last seen.
var videoColumns = func() string {
	cols := make([]string, 0, len(videoFields)+2)
	for _, f := range videoFields {
		cols = append(cols, "v."+f.Column)
	}
	return strings.Join(append(cols, "v.first_seen_ms", "v.last_seen_ms"), ", ")
}()

// feedShown is the columns of a video that a feed shows beside its place
// in a chart: a page that changes one of them dates the video's
// retitled_ms, which dates its feed entries (Steady).
var feedShown = []string{"title", "channel_title", "channel_id"}

// retitled is the condition that a stored row's feedShown columns differ
// from the page's (table names the stored row, as in videoUpsert).
func retitled(table string) string {
	var or []string
	for _, c := range feedShown {
		or = append(or, "excluded."+c+" <> "+table+c)
	}
	return "(" + strings.Join(or, " OR ") + ")"
}

// videoUpsert is a database's statement storing a page's videos from the
// page's JSON (pageJSON), each element o holding the table's columns by
// name: sel begins the SELECT, from reads the elements (and orders them,
// where the database needs it), seen is the parameter of when the page
// was fetched, value a column's value read from o, and table what names
// the stored row in the update ("" or "videos.").
func videoUpsert(sel, from, seen string, value func(f VideoField) string, table string) string {
	var cols, vals, sets []string
	for _, f := range videoFields {
		cols = append(cols, f.Column)
		vals = append(vals, value(f))
		ex, old := "excluded."+f.Column, table+f.Column
		switch f.Update {
		case Replace:
			sets = append(sets, f.Column+" = "+ex)
		case KeepIfNull:
			sets = append(sets, fmt.Sprintf("%s = coalesce(%s, %s)", f.Column, ex, old))
		case KeepIfEmpty:
			sets = append(sets, fmt.Sprintf("%s = CASE WHEN %s <> '' THEN %s ELSE %s END", f.Column, ex, ex, old))
		}
	}
	return fmt.Sprintf(`
INSERT INTO videos (%s, first_seen_ms, last_seen_ms)
%s %s, %s, %s
%s
ON CONFLICT (id) DO UPDATE SET
  %s, last_seen_ms = excluded.last_seen_ms,
  retitled_ms = CASE WHEN %s THEN excluded.last_seen_ms ELSE %sretitled_ms END
WHERE excluded.last_seen_ms >= %slast_seen_ms`,
		strings.Join(cols, ", "), sel, strings.Join(vals, ", "), seen, seen, from,
		strings.Join(sets, ",\n  "), retitled(table), table, table)
}

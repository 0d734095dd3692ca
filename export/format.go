// Package export writes the store's export rows (store.ExportRow) as files
// people take elsewhere: CSV in the layout of the "YouTube Trending Video
// Dataset", and JSON lines and Parquet with the CSV's names. Each format
// streams row by row, so an export's memory stays the same whatever its
// range; what rows there are is the store's business, and the flags the
// command's.
package export

import (
	"bufio"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"net/url"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/parquet-go/parquet-go"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/regions"
	"github.com/ingestworks/ingest/store"
)

// Encoder writes export rows one at a time; Close flushes what it holds
// (it does not close the writer).
type Encoder interface {
	Write(store.ExportRow) error
	Close() error
}

var formats = map[string]func(io.Writer) (Encoder, error){
	"csv":     newCSVEncoder,
	"jsonl":   newJSONLEncoder,
	"parquet": newParquetEncoder,
}

// Known says whether format is one New writes: csv, jsonl or parquet.
func Known(format string) bool {
	_, ok := formats[format]
	return ok
}

// extensions are each format's file name ending, and the other endings a
// file of it goes by.
var extensions = map[string][]string{"csv": {".csv"}, "jsonl": {".jsonl", ".ndjson"}, "parquet": {".parquet"}}

// Extension is the file name ending of format's files (.csv).
func Extension(format string) string {
	if e := extensions[format]; len(e) > 0 {
		return e[0]
	}
	return ""
}

// FormatOf is the format a file name's ending names; ok false when it
// names none.
func FormatOf(name string) (format string, ok bool) {
	lower := strings.ToLower(name)
	for f, exts := range extensions {
		for _, e := range exts {
			if strings.HasSuffix(lower, e) {
				return f, true
			}
		}
	}
	return "", false
}

// Columns are the export's columns, in their order in every format.
func Columns() []string { return slices.Clone(csvHeader) }

// New starts writing rows to w in format; the CSV's header is written at
// once.
func New(format string, w io.Writer) (Encoder, error) {
	f, ok := formats[format]
	if !ok {
		return nil, fmt.Errorf("no export format %q (want csv, jsonl or parquet)", format)
	}
	return f(w)
}

// csvHeader is the "YouTube Trending Video Dataset" layout, then what a
// file of several charts needs to tell them apart, then the video's
// further fields (furtherFields), then the columns read from the others
// (Derived), then how the row's run ended (RunEnd), then the row's UTC day
// (UTCDay), then what its run's pages lost (RunPages).
var csvHeader = append(append(append(append(append([]string{"video_id", "title", "publishedAt", "channelId", "channelTitle", "categoryId",
	"trending_date", "tags", "view_count", "likes", "dislikes", "comment_count", "thumbnail_link",
	"comments_disabled", "ratings_disabled", "description", "region", "chart", "rank", "run_id"}, furtherNames()...),
	derivedNames...), runEndNames...), utcDayNames...), pagesNames...)

// utcDayNames are UTCDay's columns, in its order.
var utcDayNames = []string{"trending_day_utc"}

// UTCDay is the row's day in UTC, beside trending_day's day in the
// region's zone: the day a day's row (--per day) sums up, and the day
// days_on_chart counts, so that a reader computes that figure from the
// export's own column. Last, so that every column before it stays where
// it was.
type UTCDay struct {
	TrendingDayUTC     string    `json:"trending_day_utc" parquet:"-"`
	TrendingDayUTCDate time.Time `json:"-" parquet:"trending_day_utc,date"`
}

// pagesNames are RunPages' columns, in its order.
var pagesNames = []string{"ranks_lost"}

// RunPages says what the row's run lost between its pages: a chart that
// moved while they were read leaves ranks no row of the run holds, and a
// warehouse that counts a run's rows to check it is whole finds why here.
type RunPages struct {
	RanksLost int64 `json:"ranks_lost" parquet:"ranks_lost"`
}

// utcDayOf is r's UTCDay: the UTC day its entry was fetched, the day
// days_on_chart counts (a run that crosses 00:00 UTC puts its later pages
// on the next day, as the chart's figures do), or the day a day's row sums
// up.
func utcDayOf(r *store.ExportRow) UTCDay {
	at := r.FetchedAt
	if r.Daily {
		at = r.TrendingAt
	}
	day := at.UTC().Truncate(24 * time.Hour)
	return UTCDay{TrendingDayUTC: day.Format(time.DateOnly), TrendingDayUTCDate: day}
}

// runEndNames are RunEnd's columns, in its order.
var runEndNames = []string{"run_status", "complete"}

// RunEnd is how the row's run ended, last so that every column before
// it stays where it was: a warehouse keeps whole charts by complete.
type RunEnd struct {
	// RunStatus is completed, stopped, interrupted or failed: an export
	// never takes a run still running.
	RunStatus string `json:"run_status" parquet:"run_status"`
	// Complete says the run stored the whole chart (completed), as the
	// chart API's complete does.
	Complete bool `json:"complete" parquet:"complete"`
}

// derivedNames are Derived's columns, in its order.
var derivedNames = []string{"category_name", "video_url", "chart_name", "trending_day", "category_name_local"}

// Derived are the columns a person reads a row by, each read from the
// row's others: they come after every other column, so that a reader of
// the columns before them finds each where it was.
type Derived struct {
	// CategoryName is the upstream's name of categoryId in English.
	CategoryName string `json:"category_name" parquet:"category_name"`
	VideoURL     string `json:"video_url" parquet:"video_url"`
	// ChartName is the chart as --category names it: all, or the
	// category's name (music), its id when it has none.
	ChartName string `json:"chart_name" parquet:"chart_name"`
	// TrendingDay is the day of the row's run's start in the region's zone
	// (regions.Zone), YYYY-MM-DD, in a day's row (--per day) too, whose
	// UTC day is UTCDay's: one name, one calendar.
	TrendingDay     string    `json:"trending_day" parquet:"-"`
	TrendingDayDate time.Time `json:"-" parquet:"trending_day,date"`
	// CategoryNameLocal is categoryId's name in the region's language
	// (regions.Language), as the upstream gives it, English where it
	// gives no other.
	CategoryNameLocal string `json:"category_name_local" parquet:"category_name_local"`
}

// derivedOf is r's Derived.
func derivedOf(r *store.ExportRow) Derived {
	chart := "all"
	if r.Chart != "" {
		chart = ingest.CategoryName(r.Chart)
	}
	run := r.RunAt
	if run.IsZero() { // a row read without its run's start: a run's own row
		run = r.TrendingAt
	}
	at := run.In(regions.Zone(r.Region))
	day := time.Date(at.Year(), at.Month(), at.Day(), 0, 0, 0, 0, time.UTC)
	return Derived{CategoryName: r.CategoryTitle, VideoURL: videoURL + url.QueryEscape(r.ID), ChartName: chart,
		TrendingDay: day.Format(time.DateOnly), TrendingDayDate: day, CategoryNameLocal: r.CategoryTitleLocal}
}

// videoURL is where a video plays, but for its id.
const videoURL = "https://www.youtube.com/watch?v="

// datasetFields are the store's fields of a video (store.VideoFields) that
// the dataset's layout places itself, by their export column.
var datasetFields = map[string]bool{"video_id": true, "title": true, "publishedAt": true, "channelId": true,
	"channelTitle": true, "categoryId": true, "tags": true, "thumbnail_link": true, "description": true}

// furtherFields are the video's other exported fields, each a column
// after the layout's, in the store's order: a new field of a video is
// exported by naming its column in the store's table. Each is text or a
// count.
var furtherFields = func() []store.VideoField {
	var fs []store.VideoField
	for _, f := range store.VideoFields() {
		if f.Export == "" || datasetFields[f.Export] {
			continue
		}
		if k := f.Kind(); k != "text" && k != "count" {
			panic(fmt.Sprintf("export: the video's field %s is a %s: a further column is text or a count", f.Column, k))
		}
		fs = append(fs, f)
	}
	return fs
}()

func furtherNames() []string {
	names := make([]string, len(furtherFields))
	for i, f := range furtherFields {
		names[i] = f.Export
	}
	return names
}

type csvEncoder struct {
	w   *csv.Writer
	rec []string
	cur store.ExportRow // the row's copy the further fields are read from
}

func newCSVEncoder(w io.Writer) (Encoder, error) {
	e := &csvEncoder{w: csv.NewWriter(w), rec: make([]string, len(csvHeader))}
	return e, e.w.Write(csvHeader)
}

func (e *csvEncoder) Write(r store.ExportRow) error {
	tags := "[None]" // the dataset's spelling of no tags
	if len(r.Tags) > 0 {
		tags = joinTags(r.Tags)
	}
	category, chart, err := categories(&r)
	if err != nil {
		return err
	}
	copy(e.rec, []string{r.ID, r.Title, isoTime(r.PublishedAt), r.ChannelID, r.ChannelTitle, count(category),
		isoTime(r.TrendingAt), tags, count(r.Views), count(r.Likes), "0", count(r.Comments), r.Thumbnail,
		pyBool(r.Comments == nil), pyBool(r.Likes == nil), r.Description, r.Region, count(chart), strconv.Itoa(r.Rank),
		strconv.FormatInt(r.RunID, 10)})
	e.cur = r // read through a pointer that does not move r to the heap
	for i, f := range furtherFields {
		at := len(csvHeader) - len(pagesNames) - len(utcDayNames) - len(runEndNames) - len(derivedNames) - len(furtherFields) + i
		if f.Kind() == "count" {
			e.rec[at] = count(f.Value(&e.cur.Video).(*int64))
		} else {
			e.rec[at] = f.Text(&e.cur.Video)
		}
	}
	d := derivedOf(&e.cur)
	at := len(csvHeader) - len(pagesNames) - len(utcDayNames) - len(runEndNames) - len(derivedNames)
	copy(e.rec[at:], []string{d.CategoryName, d.VideoURL, d.ChartName, d.TrendingDay, d.CategoryNameLocal,
		string(r.RunStatus), pyBool(r.Complete), utcDayOf(&e.cur).TrendingDayUTC, strconv.Itoa(r.RanksLost)})
	return e.w.Write(e.rec)
}

func (e *csvEncoder) Close() error {
	e.w.Flush()
	return e.w.Error()
}

// isoTime is every format's time as text: seconds, UTC, Z.
func isoTime(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339)
}

func count(n *int64) string {
	if n == nil {
		return ""
	}
	return strconv.FormatInt(*n, 10)
}

// categories are the row's category ids as numbers, the one type
// categoryId and chart have in every format (docs/data.md): the upstream's
// ids are decimal numbers ("10", Music) sent as strings, and a CSV reader
// takes digits for an integer. nil: none (no category known, or the
// unfiltered chart). An id that is not a number cannot be written in the
// column's type: the export stops, naming the video.
func categories(r *store.ExportRow) (category, chart *int64, err error) {
	number := func(name, s string) (*int64, error) {
		if s == "" {
			return nil, nil
		}
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil || n < 0 || strconv.FormatInt(n, 10) != s {
			return nil, fmt.Errorf("video %s (run %d): %s %q is not a category id (a decimal number)", r.ID, r.RunID, name, s)
		}
		return &n, nil
	}
	if category, err = number("categoryId", r.CategoryID); err != nil {
		return nil, nil, err
	}
	chart, err = number("chart", r.Chart)
	return category, chart, err
}

// pyBool spells a boolean as the dataset does (it was written by pandas).
func pyBool(b bool) string {
	if b {
		return "True"
	}
	return "False"
}

// Record is one row in JSON lines and Parquet, with the CSV's names, but
// for the video's further fields (furtherFields), which recordType adds.
// Times are text in JSON (isoTime) and timestamps in Parquet (UTC,
// milliseconds, whole seconds): each pair is one column, written by one
// format and skipped by the other.
type Record struct {
	VideoID          string     `json:"video_id" parquet:"video_id"`
	Title            string     `json:"title" parquet:"title"`
	PublishedAt      *string    `json:"publishedAt" parquet:"-"`
	PublishedAtTime  *time.Time `json:"-" parquet:"publishedAt,optional,timestamp(millisecond)"`
	ChannelID        string     `json:"channelId" parquet:"channelId"`
	ChannelTitle     string     `json:"channelTitle" parquet:"channelTitle"`
	CategoryID       *int64     `json:"categoryId" parquet:"categoryId,optional"`
	TrendingDate     string     `json:"trending_date" parquet:"-"`
	TrendingDateTime time.Time  `json:"-" parquet:"trending_date,timestamp(millisecond)"`
	Tags             []string   `json:"tags" parquet:"tags,list"`
	ViewCount        *int64     `json:"view_count" parquet:"view_count,optional"`
	Likes            *int64     `json:"likes" parquet:"likes,optional"`
	Dislikes         int64      `json:"dislikes" parquet:"dislikes"`
	CommentCount     *int64     `json:"comment_count" parquet:"comment_count,optional"`
	ThumbnailLink    string     `json:"thumbnail_link" parquet:"thumbnail_link"`
	CommentsDisabled bool       `json:"comments_disabled" parquet:"comments_disabled"`
	RatingsDisabled  bool       `json:"ratings_disabled" parquet:"ratings_disabled"`
	Description      string     `json:"description" parquet:"description"`
	Region           string     `json:"region" parquet:"region"`
	Chart            *int64     `json:"chart" parquet:"chart,optional"`
	Rank             int64      `json:"rank" parquet:"rank"`
	RunID            int64      `json:"run_id" parquet:"run_id"`
}

// recordType is a row of JSON lines and Parquet: Record, then a field per
// further field of the video, a string or an optional count, then Derived,
// then RunEnd, then UTCDay, then RunPages.
var recordType = func() reflect.Type {
	fields := []reflect.StructField{{Name: "Record", Type: reflect.TypeFor[Record](), Anonymous: true}}
	for i, f := range furtherFields {
		sf := reflect.StructField{Name: fmt.Sprintf("Further%d", i), Type: reflect.TypeFor[string](),
			Tag: reflect.StructTag(fmt.Sprintf(`json:%q parquet:%q`, f.Export, f.Export))}
		if f.Kind() == "count" {
			sf.Type, sf.Tag = reflect.TypeFor[*int64](), reflect.StructTag(fmt.Sprintf(`json:%q parquet:"%s,optional"`, f.Export, f.Export))
		}
		fields = append(fields, sf)
	}
	fields = append(fields, reflect.StructField{Name: "Derived", Type: reflect.TypeFor[Derived](), Anonymous: true},
		reflect.StructField{Name: "RunEnd", Type: reflect.TypeFor[RunEnd](), Anonymous: true},
		reflect.StructField{Name: "UTCDay", Type: reflect.TypeFor[UTCDay](), Anonymous: true},
		reflect.StructField{Name: "RunPages", Type: reflect.TypeFor[RunPages](), Anonymous: true})
	return reflect.StructOf(fields)
}()

// row is one reused value of recordType.
type row struct {
	v       reflect.Value // *recordType
	rec     *Record
	derived *Derived
	end     *RunEnd
	utc     *UTCDay
	pages   *RunPages
}

func newRow() row {
	v := reflect.New(recordType)
	return row{v: v, rec: v.Elem().Field(0).Addr().Interface().(*Record),
		derived: v.Elem().Field(recordType.NumField() - 4).Addr().Interface().(*Derived),
		end:     v.Elem().Field(recordType.NumField() - 3).Addr().Interface().(*RunEnd),
		utc:     v.Elem().Field(recordType.NumField() - 2).Addr().Interface().(*UTCDay),
		pages:   v.Elem().Field(recordType.NumField() - 1).Addr().Interface().(*RunPages)}
}

// set makes the row r's.
func (w row) set(r *store.ExportRow) error {
	rec, err := recordOf(*r)
	if err != nil {
		return err
	}
	*w.rec = rec
	e := w.v.Elem()
	for i, f := range furtherFields {
		if f.Kind() == "count" {
			e.Field(i + 1).Set(reflect.ValueOf(f.Value(&r.Video)))
		} else {
			e.Field(i + 1).SetString(f.Text(&r.Video))
		}
	}
	*w.derived = derivedOf(r)
	*w.end = RunEnd{RunStatus: string(r.RunStatus), Complete: r.Complete}
	*w.utc = utcDayOf(r)
	*w.pages = RunPages{RanksLost: int64(r.RanksLost)}
	return nil
}

func recordOf(r store.ExportRow) (Record, error) {
	category, chart, err := categories(&r)
	if err != nil {
		return Record{}, err
	}
	at := r.TrendingAt.UTC().Truncate(time.Second)
	rec := Record{VideoID: r.ID, Title: r.Title, ChannelID: r.ChannelID, ChannelTitle: r.ChannelTitle,
		CategoryID: category, TrendingDate: isoTime(at), TrendingDateTime: at, Tags: r.Tags, ViewCount: r.Views,
		Likes: r.Likes, CommentCount: r.Comments, ThumbnailLink: r.Thumbnail, CommentsDisabled: r.Comments == nil,
		RatingsDisabled: r.Likes == nil, Description: r.Description, Region: r.Region, Chart: chart,
		Rank: int64(r.Rank), RunID: r.RunID}
	if rec.Tags == nil {
		rec.Tags = []string{}
	}
	if !r.PublishedAt.IsZero() {
		p, t := isoTime(r.PublishedAt), r.PublishedAt.UTC().Truncate(time.Second)
		rec.PublishedAt, rec.PublishedAtTime = &p, &t
	}
	return rec, nil
}

type jsonlEncoder struct {
	b   *bufio.Writer
	enc *json.Encoder
	row row
	cur store.ExportRow
}

func newJSONLEncoder(w io.Writer) (Encoder, error) {
	b := bufio.NewWriter(w)
	enc := json.NewEncoder(b)
	enc.SetEscapeHTML(false)
	return &jsonlEncoder{b: b, enc: enc, row: newRow()}, nil
}

func (e *jsonlEncoder) Write(r store.ExportRow) error {
	e.cur = r
	if err := e.row.set(&e.cur); err != nil {
		return err
	}
	return e.enc.Encode(e.row.v.Interface())
}

func (e *jsonlEncoder) Close() error { return e.b.Flush() }

// parquetRowGroup bounds what the Parquet writer holds before it writes a
// row group: the export's memory stays constant.
const parquetRowGroup = 20_000

// parquetSchema is recordType's, under Record's name of old.
var parquetSchema = parquet.NewSchema("exportRecord", parquet.SchemaOf(reflect.New(recordType).Interface()))

// parquetColumns are the leaf columns of parquetSchema in Record's order,
// then the further fields'.
var parquetColumns = func() []int {
	var cols []int
	for i := range recordType.NumField() {
		f := recordType.Field(i)
		if f.Anonymous {
			for j := range f.Type.NumField() {
				name, _, _ := strings.Cut(f.Type.Field(j).Tag.Get("parquet"), ",")
				cols = append(cols, parquetColumn(name))
			}
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("parquet"), ",")
		cols = append(cols, parquetColumn(name))
	}
	return cols
}()

// parquetColumn is the index of the leaf column name (-1: "-", not in
// Parquet); a list's is its element's.
func parquetColumn(name string) int {
	if name == "-" {
		return -1
	}
	if c, ok := parquetSchema.Lookup(name); ok {
		return c.ColumnIndex
	}
	c, ok := parquetSchema.Lookup(name, "list", "element")
	if !ok {
		panic("export: no Parquet column " + name)
	}
	return c.ColumnIndex
}

// parquetEncoder builds each row's values column by column (a row builder
// fills the levels and the nulls), as fast as a writer of a static type:
// the further fields leave the row's type unknown until the program runs.
type parquetEncoder struct {
	w    *parquet.GenericWriter[any]
	b    *parquet.RowBuilder
	rows []parquet.Row
	cur  store.ExportRow
}

func newParquetEncoder(w io.Writer) (Encoder, error) {
	pw := parquet.NewGenericWriter[any](w, parquetSchema, parquet.MaxRowsPerRowGroup(parquetRowGroup),
		parquet.Compression(&parquet.Snappy)) // what every reader decodes
	return &parquetEncoder{w: pw, b: parquet.NewRowBuilder(parquetSchema), rows: make([]parquet.Row, 0, 256)}, nil
}

func (e *parquetEncoder) Write(r store.ExportRow) error {
	e.cur = r
	rec, err := recordOf(r)
	if err != nil {
		return err
	}
	b, col := e.b, parquetColumns
	b.Reset()
	text := func(i int, s string) { b.Add(col[i], parquet.ByteArrayValue([]byte(s))) }
	count := func(i int, n *int64) {
		if n != nil {
			b.Add(col[i], parquet.Int64Value(*n))
		}
	}
	text(0, rec.VideoID)
	text(1, rec.Title)
	if rec.PublishedAtTime != nil {
		b.Add(col[3], parquet.Int64Value(rec.PublishedAtTime.UnixMilli()))
	}
	text(4, rec.ChannelID)
	text(5, rec.ChannelTitle)
	count(6, rec.CategoryID)
	b.Add(col[8], parquet.Int64Value(rec.TrendingDateTime.UnixMilli()))
	for _, tag := range rec.Tags { // the builder repeats a column added again
		text(9, tag)
	}
	count(10, rec.ViewCount)
	count(11, rec.Likes)
	b.Add(col[12], parquet.Int64Value(rec.Dislikes))
	count(13, rec.CommentCount)
	text(14, rec.ThumbnailLink)
	b.Add(col[15], parquet.BooleanValue(rec.CommentsDisabled))
	b.Add(col[16], parquet.BooleanValue(rec.RatingsDisabled))
	text(17, rec.Description)
	text(18, rec.Region)
	count(19, rec.Chart)
	b.Add(col[20], parquet.Int64Value(rec.Rank))
	b.Add(col[21], parquet.Int64Value(rec.RunID))
	for i, f := range furtherFields {
		if f.Kind() == "count" {
			count(22+i, f.Value(&e.cur.Video).(*int64))
		} else {
			text(22+i, f.Text(&e.cur.Video))
		}
	}
	d, at := derivedOf(&e.cur), 22+len(furtherFields) // Derived's columns, its "-" one skipped
	text(at, d.CategoryName)
	text(at+1, d.VideoURL)
	text(at+2, d.ChartName)
	b.Add(col[at+4], parquet.Int32Value(int32(d.TrendingDayDate.Unix()/(24*60*60))))
	text(at+5, d.CategoryNameLocal)
	text(at+6, string(e.cur.RunStatus))
	b.Add(col[at+7], parquet.BooleanValue(e.cur.Complete))
	b.Add(col[at+9], parquet.Int32Value(int32(utcDayOf(&e.cur).TrendingDayUTCDate.Unix()/(24*60*60)))) // its "-" one skipped
	b.Add(col[at+10], parquet.Int64Value(int64(e.cur.RanksLost)))
	n := len(e.rows)
	e.rows = e.rows[:n+1] // each row's values reuse the last batch's
	e.rows[n] = b.AppendRow(e.rows[n][:0])
	if len(e.rows) < cap(e.rows) {
		return nil
	}
	return e.flushRows()
}

func (e *parquetEncoder) flushRows() error {
	_, err := e.w.WriteRows(e.rows)
	e.rows = e.rows[:0]
	return err
}

func (e *parquetEncoder) Close() error {
	if err := e.flushRows(); err != nil {
		return err
	}
	return e.w.Close()
}

// joinTags joins tags by "|" as the dataset does, bare; a tag the join
// would make ambiguous (one holding "|" or '"', one spelt [None], an
// empty one) or a CSV reader would end at (one holding a line break) is
// written in double quotes with its quotes doubled, as the dataset's
// first edition ("Trending YouTube Video Statistics") writes every tag, so
// that a reader splits on "|" outside quotes, and reads only a bare
// [None] as no tags (docs/data.md).
func joinTags(tags []string) string {
	out := make([]string, len(tags))
	for i, t := range tags {
		if t == "" || t == "[None]" || strings.ContainsAny(t, "|\"\r\n") {
			t = `"` + strings.ReplaceAll(t, `"`, `""`) + `"`
		}
		out[i] = t
	}
	return strings.Join(out, "|")
}

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
	"strconv"
	"strings"
	"time"

	"github.com/parquet-go/parquet-go"

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
// file of several charts needs to tell them apart.
var csvHeader = []string{"video_id", "title", "publishedAt", "channelId", "channelTitle", "categoryId",
	"trending_date", "tags", "view_count", "likes", "dislikes", "comment_count", "thumbnail_link",
	"comments_disabled", "ratings_disabled", "description", "region", "chart", "rank", "run_id",
	"defaultAudioLanguage", "defaultLanguage"}

type csvEncoder struct {
	w   *csv.Writer
	rec []string
}

func newCSVEncoder(w io.Writer) (Encoder, error) {
	e := &csvEncoder{w: csv.NewWriter(w), rec: make([]string, len(csvHeader))}
	return e, e.w.Write(csvHeader)
}

func (e *csvEncoder) Write(r store.ExportRow) error {
	tags := "[None]" // the dataset's spelling of no tags
	if len(r.Tags) > 0 {
		tags = strings.Join(r.Tags, "|")
	}
	copy(e.rec, []string{r.ID, r.Title, isoTime(r.PublishedAt), r.ChannelID, r.ChannelTitle, r.CategoryID,
		isoTime(r.TrendingAt), tags, count(r.Views), count(r.Likes), "0", count(r.Comments), r.Thumbnail,
		pyBool(r.Comments == nil), pyBool(r.Likes == nil), r.Description, r.Region, r.Chart, strconv.Itoa(r.Rank),
		strconv.FormatInt(r.RunID, 10), r.AudioLanguage, r.Language})
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

// pyBool spells a boolean as the dataset does (it was written by pandas).
func pyBool(b bool) string {
	if b {
		return "True"
	}
	return "False"
}

// exportRecord is one row in JSON lines and Parquet, with the CSV's names.
// Times are text in JSON (isoTime) and timestamps in Parquet (UTC,
// milliseconds, whole seconds): each pair is one column, written by one
// format and skipped by the other.
type exportRecord struct {
	VideoID          string     `json:"video_id" parquet:"video_id"`
	Title            string     `json:"title" parquet:"title"`
	PublishedAt      *string    `json:"publishedAt" parquet:"-"`
	PublishedAtTime  *time.Time `json:"-" parquet:"publishedAt,optional,timestamp(millisecond)"`
	ChannelID        string     `json:"channelId" parquet:"channelId"`
	ChannelTitle     string     `json:"channelTitle" parquet:"channelTitle"`
	CategoryID       string     `json:"categoryId" parquet:"categoryId"`
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
	Chart            string     `json:"chart" parquet:"chart"`
	Rank             int32      `json:"rank" parquet:"rank"`
	RunID            int64      `json:"run_id" parquet:"run_id"`
	AudioLanguage    string     `json:"defaultAudioLanguage" parquet:"defaultAudioLanguage"`
	Language         string     `json:"defaultLanguage" parquet:"defaultLanguage"`
}

func recordOf(r store.ExportRow) exportRecord {
	at := r.TrendingAt.UTC().Truncate(time.Second)
	rec := exportRecord{VideoID: r.ID, Title: r.Title, ChannelID: r.ChannelID, ChannelTitle: r.ChannelTitle,
		CategoryID: r.CategoryID, TrendingDate: isoTime(at), TrendingDateTime: at, Tags: r.Tags, ViewCount: r.Views,
		Likes: r.Likes, CommentCount: r.Comments, ThumbnailLink: r.Thumbnail, CommentsDisabled: r.Comments == nil,
		RatingsDisabled: r.Likes == nil, Description: r.Description, Region: r.Region, Chart: r.Chart,
		Rank: int32(r.Rank), RunID: r.RunID, AudioLanguage: r.AudioLanguage, Language: r.Language}
	if rec.Tags == nil {
		rec.Tags = []string{}
	}
	if !r.PublishedAt.IsZero() {
		p, t := isoTime(r.PublishedAt), r.PublishedAt.UTC().Truncate(time.Second)
		rec.PublishedAt, rec.PublishedAtTime = &p, &t
	}
	return rec
}

type jsonlEncoder struct {
	b   *bufio.Writer
	enc *json.Encoder
}

func newJSONLEncoder(w io.Writer) (Encoder, error) {
	b := bufio.NewWriter(w)
	enc := json.NewEncoder(b)
	enc.SetEscapeHTML(false)
	return &jsonlEncoder{b: b, enc: enc}, nil
}

func (e *jsonlEncoder) Write(r store.ExportRow) error { return e.enc.Encode(recordOf(r)) }
func (e *jsonlEncoder) Close() error                  { return e.b.Flush() }

// parquetRowGroup bounds what the Parquet writer holds before it writes a
// row group: the export's memory stays constant.
const parquetRowGroup = 20_000

type parquetEncoder struct {
	w   *parquet.GenericWriter[exportRecord]
	buf []exportRecord
}

func newParquetEncoder(w io.Writer) (Encoder, error) {
	pw := parquet.NewGenericWriter[exportRecord](w, parquet.MaxRowsPerRowGroup(parquetRowGroup),
		parquet.Compression(&parquet.Snappy)) // what every reader decodes
	return &parquetEncoder{w: pw, buf: make([]exportRecord, 0, 256)}, nil
}

func (e *parquetEncoder) Write(r store.ExportRow) error {
	e.buf = append(e.buf, recordOf(r))
	if len(e.buf) < cap(e.buf) {
		return nil
	}
	return e.flushBuf()
}

func (e *parquetEncoder) flushBuf() error {
	_, err := e.w.Write(e.buf)
	e.buf = e.buf[:0]
	return err
}

func (e *parquetEncoder) Close() error {
	if err := e.flushBuf(); err != nil {
		return err
	}
	return e.w.Close()
}

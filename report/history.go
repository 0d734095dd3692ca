package report

import (
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/store"
	"github.com/ingestworks/ingest/util/termtext"
)

// HistoryJSON is a video's history as `ingest history --json` prints it.
type HistoryJSON struct {
	ID        string             `json:"id"`
	Title     string             `json:"title"`
	Channel   string             `json:"channel"`
	Category  string             `json:"category_id"`
	Published *time.Time         `json:"published_at"`
	FirstSeen time.Time          `json:"first_seen"`
	LastSeen  time.Time          `json:"last_seen"`
	Charts    []HistoryChartJSON `json:"charts"`
	Views     []HistoryPointJSON `json:"views"`
}

// HistoryChartJSON is one chart the video was on.
type HistoryChartJSON struct {
	Region   string    `json:"region"`
	Category string    `json:"category"` // "" the unfiltered chart
	First    time.Time `json:"first"`
	Last     time.Time `json:"last"`
	BestRank int       `json:"best_rank"`
	LastRank int       `json:"last_rank"`
	Runs     int       `json:"runs"`
}

// HistoryPointJSON is one count of the video's.
type HistoryPointJSON struct {
	At       time.Time `json:"at"`
	Views    int64     `json:"views"`
	Likes    *int64    `json:"likes"`
	Comments *int64    `json:"comments"`
}

// HistoryJSONOf is h as HistoryJSON.
func HistoryJSONOf(h store.History) HistoryJSON {
	v := h.Video
	out := HistoryJSON{ID: v.ID, Title: v.Title, Channel: v.ChannelTitle, Category: v.CategoryID,
		FirstSeen: v.FirstSeen, LastSeen: v.LastSeen, Charts: []HistoryChartJSON{}, Views: []HistoryPointJSON{}}
	if !v.PublishedAt.IsZero() {
		out.Published = &v.PublishedAt
	}
	for _, c := range h.Charts {
		out.Charts = append(out.Charts, HistoryChartJSON{Region: c.Region, Category: c.Category, First: c.First,
			Last: c.Last, BestRank: c.BestRank, LastRank: c.LastRank, Runs: c.Entries})
	}
	for _, p := range h.Views {
		out.Views = append(out.Views, HistoryPointJSON{At: p.At, Views: p.Views, Likes: p.Likes, Comments: p.Comments})
	}
	return out
}

const historyTime = "2006-01-02 15:04"

// History writes `ingest history`'s text: the video, each chart it was on
// since since, and its views as a sparkline width wide.
func History(out io.Writer, h store.History, width int, since time.Time) {
	v := h.Video
	fmt.Fprintf(out, "%s  %s\n", v.ID, v.Title)
	fmt.Fprintf(out, "channel %s, category %s, first seen %s, last seen %s\n\n", v.ChannelTitle, v.CategoryID,
		v.FirstSeen.Format(historyTime), v.LastSeen.Format(historyTime))
	switch {
	case len(h.Charts) == 0 && !since.IsZero() && since.After(v.FirstSeen):
		fmt.Fprintf(out, "not on a chart since %s (--since; --since all shows every chart it was on)\n", since.UTC().Format(historyTime))
	case len(h.Charts) == 0:
		fmt.Fprintln(out, "never on a chart (found by a backfill)")
	default:
		tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, "CHART\tFIRST SEEN\tLAST SEEN\tBEST\tLAST\tRUNS\t")
		for _, c := range h.Charts {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%d\t%d\t\n", ChartLabel(c.Region, c.Category),
				c.First.Format(historyTime), c.Last.Format(historyTime), c.BestRank, c.LastRank, c.Entries)
		}
		tw.Flush()
	}
	if len(h.Views) == 0 {
		return
	}
	first, last := h.Views[0], h.Views[len(h.Views)-1]
	views := make([]int64, len(h.Views))
	for i, p := range h.Views {
		views[i] = p.Views
	}
	fmt.Fprintf(out, "\nviews %s -> %s, %s to %s (%d points)\n%s\n", termtext.Thousands(first.Views), termtext.Thousands(last.Views),
		first.At.Format(historyTime), last.At.Format(historyTime), len(h.Views), termtext.Sparkline(views, width))
}

// ChartLabel names a chart: GB, or GB music.
func ChartLabel(region, category string) string {
	if category == "" {
		return region
	}
	return region + " " + ingest.CategoryName(category)
}

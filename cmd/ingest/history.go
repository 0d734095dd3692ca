package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/internal/termtext"
	"github.com/ingestworks/ingest/store"
)

type historyFlags struct {
	json  bool
	width int
	since string
}

func newHistoryCmd(s *settings) *cobra.Command {
	f := &historyFlags{}
	cmd := &cobra.Command{
		Use:   "history VIDEO_ID",
		Short: "Show a video's ranks per chart and its views over time (costs no quota)",
		Long: `history shows what the database knows of one video: each chart it was on
(first and last seen, best and last rank, how many runs), and its view count
over time as a sparkline, from the charts and from tracking.

The views cover the last --since: 7 days unless told, as long as tracking
follows a video by default (a video on a chart run hourly all year has
8,760 entries there, each a lookup). They are one point an hour at most: a minute for a
video seen over less than two days, a second under two hours.

--json prints it all for scripts.`,
		Example: `  ingest history dQw4w9WgXcQ
  ingest history --json -- -pghCU2YJKs | jq '.views[-1]'`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 || strings.TrimSpace(args[0]) == "" {
				return usageErrorf("history: give one VIDEO_ID, e.g. ingest history dQw4w9WgXcQ")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			return runHistory(cmd.Context(), cmd.OutOrStdout(), s, f, strings.TrimSpace(args[0]))
		},
	}
	// Video ids may start with -: they go after --, and the error says so.
	cmd.SetFlagErrorFunc(func(_ *cobra.Command, err error) error {
		return usageErrorf("%w (a VIDEO_ID that starts with - goes after --: ingest history -- -xyz)", err)
	})
	cmd.Flags().BoolVar(&f.json, "json", false, "print JSON: video, charts, views")
	cmd.Flags().IntVar(&f.width, "width", 60, "the sparkline's width in characters (10-400)")
	cmd.Flags().StringVar(&f.since, "since", "7d", "how far back: a span (30d, 36h), a date (YYYY-MM-DD or RFC 3339), or all")
	return cmd
}

func runHistory(ctx context.Context, out io.Writer, s *settings, f *historyFlags, id string) error {
	if f.width < 10 || f.width > 400 {
		return usageErrorf("--width: want 10 to 400, got %d", f.width)
	}
	since, err := historySince(f.since, time.Now())
	if err != nil {
		return usageErrorf("--since: %v", err)
	}
	db, err := openExisting(ctx, s)
	if err != nil {
		return err
	}
	defer db.Close()
	h, ok, err := db.VideoHistory(ctx, id, since)
	if err != nil {
		return runtimeError(err)
	}
	if !ok {
		return runtimeError(fmt.Errorf("history: no video %q is stored (ingest search finds stored ones)", id))
	}
	if f.json {
		return writeJSON(out, historyJSONOf(h))
	}
	printHistory(out, h, f.width, since)
	return nil
}

// historySince reads --since: all (the zero time), a span back from now,
// or a date.
func historySince(s string, now time.Time) (time.Time, error) {
	if s == "all" {
		return time.Time{}, nil
	}
	if d, err := parseKeep(s); err == nil {
		return now.Add(-d), nil
	}
	t, err := parseDay(s)
	if err != nil {
		return t, fmt.Errorf("want a span (30d), a date (2026-11-01) or all, got %q", s)
	}
	if t.After(now) {
		return t, fmt.Errorf("%s is in the future: give a past date, a span (30d) or all", s)
	}
	return t, nil
}

type historyJSON struct {
	ID        string          `json:"id"`
	Title     string          `json:"title"`
	Channel   string          `json:"channel"`
	Category  string          `json:"category_id"`
	Published *time.Time      `json:"published_at"`
	FirstSeen time.Time       `json:"first_seen"`
	LastSeen  time.Time       `json:"last_seen"`
	Charts    []chartJSON     `json:"charts"`
	Views     []viewPointJSON `json:"views"`
}

type chartJSON struct {
	Region   string    `json:"region"`
	Category string    `json:"category"` // "" the unfiltered chart
	First    time.Time `json:"first"`
	Last     time.Time `json:"last"`
	BestRank int       `json:"best_rank"`
	LastRank int       `json:"last_rank"`
	Runs     int       `json:"runs"`
}

type viewPointJSON struct {
	At       time.Time `json:"at"`
	Views    int64     `json:"views"`
	Likes    *int64    `json:"likes"`
	Comments *int64    `json:"comments"`
}

func historyJSONOf(h store.History) historyJSON {
	v := h.Video
	out := historyJSON{ID: v.ID, Title: v.Title, Channel: v.ChannelTitle, Category: v.CategoryID,
		FirstSeen: v.FirstSeen, LastSeen: v.LastSeen, Charts: []chartJSON{}, Views: []viewPointJSON{}}
	if !v.PublishedAt.IsZero() {
		out.Published = &v.PublishedAt
	}
	for _, c := range h.Charts {
		out.Charts = append(out.Charts, chartJSON{Region: c.Region, Category: c.Category, First: c.First,
			Last: c.Last, BestRank: c.BestRank, LastRank: c.LastRank, Runs: c.Entries})
	}
	for _, p := range h.Views {
		out.Views = append(out.Views, viewPointJSON{At: p.At, Views: p.Views, Likes: p.Likes, Comments: p.Comments})
	}
	return out
}

const historyTime = "2006-01-02 15:04"

func printHistory(out io.Writer, h store.History, width int, since time.Time) {
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
			fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%d\t%d\t\n", chartLabel(c.Region, c.Category),
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

// chartLabel names a chart: GB, or GB music.
func chartLabel(region, category string) string {
	if category == "" {
		return region
	}
	return region + " " + ingest.CategoryName(category)
}

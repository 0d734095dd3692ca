package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/ingestworks/ingest/report"
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
	since, err := historySince(f.since, s.now())
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
		return err
	}
	if !ok {
		return fmt.Errorf("history: no video %q is stored (ingest search finds stored ones)", id)
	}
	if f.json {
		return writeJSON(out, report.HistoryJSONOf(h))
	}
	report.History(out, h, f.width, since)
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

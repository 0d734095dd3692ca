package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/store"
	"github.com/ingestworks/ingest/web"
)

type chartFlags struct {
	category string
	language string
	at       string
	limit    int
	json     bool
}

func newChartCmd(s *settings) *cobra.Command {
	f := &chartFlags{}
	cmd := &cobra.Command{
		Use:     "chart REGION",
		Aliases: []string{"charts"},
		Short:   "Print a region's stored trending chart (costs no quota)",
		Long: `chart prints a region's trending chart as the database holds it: its latest
run, or the newest run that started at or before --at; each video's rank,
views, title, channel and link. With --derived on (INGEST_DERIVED), also its
movement since the chart's previous run, marked as computed by ingest
(docs/explanation/terms.md).

--category prints that category's chart, --language the chart's videos in
one language, each at its rank in the whole chart (the API's ?language=).
--json prints what /api/v1/charts/{region} answers.`,
		Example: `  ingest chart US
  ingest chart IN --language hi --limit 20
  ingest chart GB --category music --at 2026-11-21T09:00:00Z --json`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 || strings.TrimSpace(args[0]) == "" {
				return usageErrorf("chart: give one REGION, e.g. ingest chart US")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			return runChart(cmd.Context(), cmd.OutOrStdout(), s, f, args[0])
		},
	}
	cmd.Flags().StringVar(&f.category, "category", "", "that category's chart: an id or a name (music, gaming...)")
	cmd.Flags().StringVar(&f.language, "language", "", "only videos in this language (BCP-47: hi, en-US, zxx): their audio's or their text's,\nor a narrower form of it (hi keeps hi-IN), each at its rank in the whole chart")
	cmd.Flags().StringVar(&f.at, "at", "", "the chart as it was then (RFC 3339): its newest run started at or before it; a time without a fraction of a second covers its whole second, as printed")
	cmd.Flags().IntVar(&f.limit, "limit", 50, "at most this many videos (1-200)")
	cmd.Flags().BoolVar(&f.json, "json", false, "print the chart as /api/v1/charts/{region} answers it")
	return cmd
}

// chartQuery is what runChart asks the store for.
type chartQuery struct {
	region, category, language string
	at                         time.Time
}

func parseChart(f *chartFlags, region string) (chartQuery, error) {
	var q chartQuery
	var err error
	if q.region, err = parseRegion("chart", region); err != nil {
		return q, err
	}
	if f.limit < 1 || f.limit > 200 {
		return q, usageErrorf("--limit: want 1 to 200, got %d", f.limit)
	}
	if q.category, err = ingest.CategoryID(f.category); err != nil {
		return q, usageErrorf("--category: %v", err)
	}
	if q.language, err = store.Language(f.language); err != nil {
		return q, usageErrorf("--language: %q is not a BCP-47 language tag (hi, en-US, zxx)", f.language)
	}
	if f.at != "" {
		if q.at, err = time.Parse(time.RFC3339, f.at); err != nil {
			return q, usageErrorf("--at: want an RFC 3339 time such as 2026-11-21T09:00:00Z, got %q", f.at)
		}
	}
	return q, nil
}

func runChart(ctx context.Context, out io.Writer, s *settings, f *chartFlags, region string) error {
	q, err := parseChart(f, region)
	if err != nil {
		return err
	}
	db, err := openExisting(ctx, s)
	if err != nil {
		return err
	}
	defer db.Close()
	c, err := db.Chart(ctx, store.ChartQuery{Region: q.region, Category: q.category, Language: q.language, At: q.at, Limit: f.limit})
	if errors.Is(err, store.ErrNoChart) {
		return noChart(ctx, db.DB, q, f.category, err)
	}
	if err != nil {
		return err
	}
	if f.json {
		return writeJSON(out, web.ChartOf(c, s.standing.Derived))
	}
	web.ChartOf(c, s.standing.Derived).WriteText(out)
	return nil
}

// noChart says what to do about a chart with no run to show: ask for a
// time after its first run, when it has one; else the run that fetches it
// (with --categories for a category's chart, which a run without it never
// fetches).
func noChart(ctx context.Context, db *store.DB, q chartQuery, category string, err error) error {
	if !q.at.IsZero() {
		first, ok, ferr := db.FirstChartAt(ctx, q.region, q.category)
		if ferr != nil {
			return ferr
		}
		if ok {
			return fmt.Errorf("%w at or before %s: its earliest run started at %s (--at %s or later)", err,
				q.at.UTC().Format(time.RFC3339), first.Format(time.RFC3339), first.Format(time.RFC3339))
		}
	}
	run := "ingest run --once --regions " + q.region
	if q.category != "" {
		run += " --categories " + category
	}
	return fmt.Errorf("%w (%s stores one)", err, run)
}

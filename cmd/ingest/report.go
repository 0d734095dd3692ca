package main

import (
	"context"
	"errors"
	"io"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/ingestworks/ingest/jobs"
	"github.com/ingestworks/ingest/report"
	"github.com/ingestworks/ingest/store"
	"github.com/ingestworks/ingest/wiring"
)

type reportFlags struct {
	json    bool
	regions string
	every   time.Duration

	regionsGiven, everyGiven bool
}

func newReportCmd(s *settings) *cobra.Command {
	f := &reportFlags{}
	cmd := &cobra.Command{
		Use:   "report",
		Short: "Show how much quota is left, where it went and how each region did",
		Long: `report shows, for the quota key: every pool's limit, reserve, units used in
the trailing window, what remains, when there will be room again and whether
the upstream has blocked it; where the units went (by operation, by region,
by hour); each region's last run and next slot; and whether the schedule fits
the daily quota.

report is read-only: it spends no quota and writes nothing, to Redis or to
the database, and opens the database read-only (a read-only directory will
do). On a host with no database yet it still shows the pools, from the
limiter (Redis knows what other hosts spent), and creates no file. The
quota key is --quota-key, else the hash of YOUTUBE_API_KEY, else the only
quota key the database's ledger knows.

Next runs and the plan follow the schedule a daemon on this database runs
(it records its --every and regions); --every and --regions override it.`,
		Example: `  ingest report
  ingest report --json | jq '.pools[] | {name, remaining}'`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			f.regionsGiven, f.everyGiven = cmd.Flags().Changed("regions"), cmd.Flags().Changed("every")
			return runReport(cmd.Context(), cmd.OutOrStdout(), s, f)
		},
	}
	cmd.Flags().BoolVar(&f.json, "json", false, "print one JSON object (the format scripts rely on)")
	cmd.Flags().StringVar(&f.regions, "regions", "", "regions the schedule runs, for next runs and the plan (default the daemon's, else the default regions)")
	cmd.Flags().DurationVar(&f.every, "every", time.Hour, "the schedule's period, for next runs and the plan (default the daemon's, else 1h)")
	return cmd
}

func runReport(ctx context.Context, out io.Writer, s *settings, f *reportFlags) error {
	codes, err := parseRegions(f.regions, f.regionsGiven)
	if err != nil {
		return err
	}
	if f.every < jobs.MinEvery {
		return usageErrorf("--every: must be at least %s, got %s", jobs.MinEvery, f.every)
	}
	src := report.Sources{DB: report.NoDB{}, Costs: s.costs, Regions: codes, Every: f.every, ScheduleFrom: "--every",
		Standing: s.standing}
	db, err := store.OpenExisting(ctx, s.db)
	switch {
	case errors.Is(err, store.ErrNoDatabase):
		src.NoDatabase = true
	case err != nil:
		return s.dbError(err)
	default:
		defer db.Close()
		s.warnTerms(ctx, db)
		src.DB, src.Size, src.Held = db, db.Size, db.Held
		if err := useSchedule(ctx, db, f, &src); err != nil {
			return runtimeError(err)
		}
	}
	if !f.everyGiven && src.ScheduleFrom == "--every" {
		src.ScheduleFrom = "default"
	}
	if src.QuotaKey, err = reportQuotaKey(ctx, s, db); err != nil {
		return err
	}
	l, closeLimiter, err := reportLimiter(s, db, src.QuotaKey)
	if err != nil {
		return err
	}
	defer closeLimiter()
	src.Limiter = l
	rep, err := buildReport(ctx, src)
	if err != nil {
		return runtimeError(err)
	}
	rep.Clock = reportClock(ctx, db)
	if f.json {
		return writeJSON(out, rep.JSON())
	}
	rep.Text(out, time.Local)
	return nil
}

// useSchedule takes the daemon's recorded schedule for what the flags do
// not give.
func useSchedule(ctx context.Context, db *store.DB, f *reportFlags, src *report.Sources) error {
	sch, ok, err := db.Schedule(ctx)
	if err != nil || !ok {
		return err
	}
	if !f.everyGiven {
		src.Every, src.ScheduleFrom = sch.Every, "the daemon's"
	}
	if !f.regionsGiven && len(sch.Regions) > 0 {
		src.Regions = sch.Regions
	}
	return nil
}

// reportLimiter opens the limiter for reading. With no database, the
// embedded limiter has spent nothing on this host: its pools are whole.
func reportLimiter(s *settings, db *store.DB, key string) (report.StateReader, func(), error) {
	if db == nil && s.redisURL == "" {
		return report.WholePools{Costs: s.costs}, func() {}, nil
	}
	return s.openLimiter(db, key)
}

// reportQuotaKey: --quota-key, else the API key's hash, else the one quota
// key in the ledger (wiring.Host.ReadQuotaKey).
func reportQuotaKey(ctx context.Context, s *settings, db *store.DB) (string, error) {
	k, _ := apiKey()
	key, err := s.host().ReadQuotaKey(ctx, s.quotaKey, k, db)
	return key, runtimeError(err)
}

// buildReport builds the report of src with the staggered schedule's next
// runs and slots.
func buildReport(ctx context.Context, src report.Sources) (*report.Report, error) {
	src.Next, src.Slots = jobs.NextRuns(src.Regions, src.Every), wiring.Stagger(src.Regions, src.Every)
	return report.Build(ctx, src)
}

func tw(out io.Writer) *tabwriter.Writer { return tabwriter.NewWriter(out, 0, 0, 2, ' ', 0) }

// reportClock is the ledger's last reading of the upstream's clock for the
// report; nil when there is none (or no database).
func reportClock(ctx context.Context, db *store.DB) *report.Clock {
	skew, seen, ok := wiring.LastClock(ctx, db)
	if !ok {
		return nil
	}
	return &report.Clock{Skew: skew, Seen: seen}
}

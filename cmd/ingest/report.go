package main

import (
	"context"
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/ingestworks/ingest/jobs"
	"github.com/ingestworks/ingest/report"
	"github.com/ingestworks/ingest/wiring"
)

type reportFlags struct {
	json     bool
	schedule scheduleFlags
}

// scheduleFlags are --regions and --every of the commands that show the
// schedule's next runs and plan (report, serve).
type scheduleFlags struct {
	regions                  string
	every                    time.Duration
	regionsGiven, everyGiven bool
}

func (f *scheduleFlags) bind(cmd *cobra.Command) {
	cmd.Flags().StringVar(&f.regions, "regions", "", "regions the schedule runs, for next runs and the plan (default the daemon's, else the default regions)")
	cmd.Flags().DurationVar(&f.every, "every", time.Hour, "the schedule's period, for next runs and the plan (default the daemon's, else 1h)")
}

// given notes which of the flags cmd was given: those not given follow
// the daemon's recorded schedule.
func (f *scheduleFlags) given(cmd *cobra.Command) *scheduleFlags {
	f.regionsGiven, f.everyGiven = cmd.Flags().Changed("regions"), cmd.Flags().Changed("every")
	return f
}

// schedule reads the flags.
func (f *scheduleFlags) schedule() (wiring.Schedule, error) {
	sel, err := regionsFlag(f.regions, f.regionsGiven)
	if err != nil {
		return wiring.Schedule{}, err
	}
	return wiring.Schedule{Timetable: jobs.Timetable{Every: f.every}, RegionsGiven: f.regionsGiven, EveryGiven: f.everyGiven,
		Regions: sel}, checkEvery("--every", f.every)
}

// checkEvery refuses a period (--every, --track-every) shorter than the
// schedule's least.
func checkEvery(flag string, every time.Duration) error {
	if every < jobs.MinEvery {
		return usageErrorf("%s: must be at least %s, got %s", flag, jobs.MinEvery, every)
	}
	return nil
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

Next runs and the plan follow the schedule a daemon, or a cron's run --once
--every, recorded on this database (its regions with their tiers and depths,
categories, --every and --max-stale); --every and --regions override it.`,
		Example: `  ingest report
  ingest report --json | jq '.pools[] | {name, remaining}'`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			f.schedule.given(cmd)
			return runReport(cmd.Context(), cmd.OutOrStdout(), s, f)
		},
	}
	cmd.Flags().BoolVar(&f.json, "json", false, "print one JSON object (the format scripts rely on)")
	f.schedule.bind(cmd)
	return cmd
}

func runReport(ctx context.Context, out io.Writer, s *settings, f *reportFlags) error {
	sch, err := f.schedule.schedule()
	if err != nil {
		return err
	}
	src := report.Sources{DB: report.NoDB{}, Costs: s.costs, Timetable: sch.Timetable, ScheduleFrom: "--every",
		Standing: s.standing}
	db, err := s.host().OpenIfAny(ctx)
	switch {
	case err != nil:
		return err
	case db == nil:
		src.NoDatabase = true
		if err := wiring.Follow(ctx, sch, nil, &src); err != nil {
			return err
		}
	default:
		defer db.Close()
		s.warnTerms(ctx, db)
		src.DB, src.Size, src.Held = db, db.Size, wiring.HeldIn(db)
		if err := wiring.Follow(ctx, sch, db, &src); err != nil {
			return err
		}
	}
	if !sch.EveryGiven && src.ScheduleFrom == "--every" {
		src.ScheduleFrom = "default"
	}
	if src.QuotaKey, err = reportQuotaKey(ctx, s, db); err != nil {
		return err
	}
	l, closeLimiter, err := s.host().ReadLimiter(db, src.QuotaKey, src.Costs)
	if err != nil {
		return err
	}
	defer closeLimiter()
	src.Limiter, src.Now = l, s.now()
	rep, err := wiring.BuildReport(ctx, src)
	if err != nil {
		return err
	}
	rep.Clock = s.host().LastClock(ctx, db)
	if f.json {
		return writeJSON(out, rep.JSON())
	}
	rep.Text(out, time.Local)
	return nil
}

// reportQuotaKey: --quota-key, else the API key's hash, else the one quota
// key in the ledger (wiring.Host.ReadQuotaKey).
func reportQuotaKey(ctx context.Context, s *settings, db *wiring.Database) (string, error) {
	k, _ := apiKey()
	key, err := s.host().ReadQuotaKey(ctx, s.quotaKey, k, db)
	return key, err
}

package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/schollz/progressbar/v3"
	"github.com/spf13/cobra"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/export"
	"github.com/ingestworks/ingest/store"
	"github.com/ingestworks/ingest/util/termbar"
)

type exportFlags struct {
	since, until, region, category, format, out, per string
	force, completeOnly                              bool
	formatSet                                        bool // --format given, not its default
	wait                                             time.Duration
}

func newExportCmd(s *settings) *cobra.Command {
	f := &exportFlags{}
	cmd := &cobra.Command{
		Use:   "export --since DATE|SPAN [--until DATE|SPAN] [--region R] [--category C] [--format csv|jsonl|parquet] [--out FILE|-]",
		Short: "Write the stored chart entries as CSV, JSON lines or Parquet (costs no quota)",
		Long: `export writes one row per video per chart run started in [--since, --until),
oldest run first, each run by rank, trending_date the run's start and run_id
the run. A run is taken only once it has ended: a run that started in the
window and is still in flight is waited for (--wait), so that windows that
meet end to end hold every row of every run exactly once, however soon
after their end each is exported. A run that starts after the window's end
is the next window's; the log line names the window, the runs taken and
each run left out, and why. With --per day it writes one row per video,
region and chart a day, as the dataset does: trending_date the day at 00:00Z, the counts and
rank of the day's last run that showed the video (run_id). It streams:
memory stays the same whatever the range. On a terminal a progress bar runs
on stderr.

CSV columns follow the "YouTube Trending Video Dataset" layout (video_id,
title, publishedAt, channelId, channelTitle, categoryId, trending_date, tags,
view_count, likes, dislikes, comment_count, thumbnail_link,
comments_disabled, ratings_disabled, description), then region, chart,
rank and run_id, the video's languages (defaultAudioLanguage,
defaultLanguage), then what a person reads a row
by: category_name, video_url, chart_name (all, or the category),
trending_day (the day of the row's run in the region's zone; docs/data.md)
and category_name_local (the category's name in the region's language),
then how the row's run ended: run_status (completed, stopped, interrupted,
failed) and complete (the run stored the whole chart; --complete-only
keeps those alone), trending_day_utc (the row's day in UTC, the day
--per day sums up and days_on_chart counts), and last ranks_lost (how
many of its run's ranks no row holds: the chart moved between the run's
pages; docs/data.md). Times are UTC to the second (2026-11-21T09:00:00Z) in CSV
and JSON, timestamps in Parquet. The metadata is each video's latest; the counts are the run's.
dislikes is always 0: the upstream no longer publishes them. A hidden count
is empty in CSV, null in JSON and Parquet.

--since and --until take a day (2026-11-01, midnight UTC), an RFC 3339
time, or a span back from now as --keep writes it (7d, 1w, 24h): a span
counts back from the current minute, and with a span for --since the end
defaults to that minute, so that a job run each week by cron, each run
starting within its minute, writes weeks that meet end to end.

--out writes a file, replaced only once the export is complete: it is
written beside it first, as .FILE.PID.N, which a failure, SIGTERM or SIGINT
removes (exit 1), and the next export to the same file removes if a killed
one left it. - (the default) writes to stdout. Only a regular file is
written, or the one a symbolic link leads to: a device, a pipe, a socket,
a directory or a link to nowhere is refused, --force or not. In --out's
name, {since} is the UTC day the export starts, {last} the last day it
holds, and {until} the day of its end, not included (--until's, or
today's; {date} is the same): charts-{since}_{last}.csv. An extension
.csv, .jsonl or .parquet names the format when --format is not given,
and one that disagrees with --format is refused.

Exit status, for a scheduler to act on: 0 when rows were written; 3 when
the window held no row (the file is still written: the header alone in
CSV, nothing in JSON lines, a typed file in Parquet); 2 for a usage error
or a database that does not exist (--db / INGEST_DB), before anything is
written; 1 for a runtime error (a run still in flight after --wait, I/O).`,
		Example: `  ingest export --since 2026-11-01 --format csv --out trending.csv
  ingest export --since 7d --out 'charts-{since}_{last}.csv'    # a weekly cron job
  ingest export --since 2026-01-01 --until 2026-07-01 --region GB --category music --format parquet --out gb.parquet`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			f.formatSet = cmd.Flags().Changed("format")
			return runExport(cmd.Context(), cmd.OutOrStdout(), s, f)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.since, "since", "", "the start: a day or a time (YYYY-MM-DD or RFC 3339, UTC), or a span back from now (7d, 1w, 24h); required")
	fl.StringVar(&f.until, "until", "", "the end, not included: a day, a time or a span back from now (1d); default: now (with a span for --since, the minute it counts from)")
	fl.StringVar(&f.region, "region", "", "only this region's charts")
	fl.StringVar(&f.category, "category", "", "only this chart: a category id or name (music, gaming, film...), or all for the unfiltered chart")
	fl.StringVar(&f.format, "format", "csv", "csv, jsonl or parquet; default: --out's extension (.csv, .jsonl, .parquet), else csv")
	fl.StringVar(&f.out, "out", "-", "the file to write; - for stdout; in its name {since} is the day the export starts, {last} the last day it holds, {until} (or {date}) the day of its end, not included (UTC, YYYY-MM-DD); an existing file is replaced only with --force")
	fl.BoolVar(&f.force, "force", false, "replace --out's file when it exists (only a regular file: never a device, a pipe, a socket or a directory)")
	fl.StringVar(&f.per, "per", "run", "run: a row per chart run; day: a row per video, region and chart a day")
	fl.BoolVar(&f.completeOnly, "complete-only", false, "only the runs that stored the whole chart (run_status completed); the others are left out and said")
	fl.DurationVar(&f.wait, "wait", 2*time.Minute, "how long to wait for the runs that started in the window and are still in flight; past it the export fails, naming them")
	return cmd
}

// exportJob is the export the flags asked for, checked.
type exportJob struct {
	filter store.ExportFilter
	format string
	out    string // as given, for messages
	file   string // what is written: out, or the file its link leads to
	rows   *int64 // written so far
	// log says how far the export has gone when no terminal shows a bar.
	log *slog.Logger
	now func() time.Time // the house clock's, the log's rate is read by
	// wait bounds the wait for the window's runs still in flight.
	wait time.Duration
	// runs are the window's runs as the export found them once none was
	// in flight (settle); nil without a database.
	runs []store.ExportRun
}

func parseExport(f *exportFlags, now time.Time) (exportJob, error) {
	var j exportJob
	var err error
	if f.since == "" {
		return j, usageErrorf("export: --since is required (e.g. --since 2026-11-01 or --since 7d)")
	}
	// A span counts back from the minute, not the instant, so that the
	// runs of a schedule that starts within its minute (cron) meet end to
	// end: no chart run is in two files, nor in none.
	minute := now.Truncate(time.Minute)
	var spanned bool
	if j.filter.Since, spanned, err = parseWhen("--since", f.since, minute); err != nil {
		return j, err
	}
	j.filter.Until = now
	if spanned {
		j.filter.Until = minute
	}
	if f.until != "" {
		if j.filter.Until, _, err = parseWhen("--until", f.until, minute); err != nil {
			return j, err
		}
	}
	switch {
	case f.until == "" && !j.filter.Until.After(j.filter.Since):
		// --until was not given: the fault is --since's, which is to come
		return j, usageErrorf("--since %s is not before now (%s): no run has started there yet; give a --since in the past",
			j.filter.Since.Format(time.RFC3339), j.filter.Until.Format(time.RFC3339))
	case !j.filter.Until.After(j.filter.Since):
		return j, usageErrorf("--until (%s) must be after --since (%s)", j.filter.Until.Format(time.RFC3339), j.filter.Since.Format(time.RFC3339))
	}
	if j.filter.Region, err = parseRegion("--region", f.region); err != nil {
		return j, err
	}
	if f.category != "" {
		if j.filter.Category, err = ingest.CategoryID(f.category); err != nil {
			return j, usageErrorf("--category: %v", err)
		}
		j.filter.Unfiltered = j.filter.Category == ""
	}
	if !export.Known(f.format) {
		return j, usageErrorf("--format: want csv, jsonl or parquet, got %q", f.format)
	}
	if err := formatOfName(f); err != nil {
		return j, err
	}
	switch f.per {
	case "run", "hour", "":
	case "day":
		j.filter.PerDay = true
	default:
		return j, usageErrorf("--per: want run or day, got %q", f.per)
	}
	if f.wait < 0 {
		return j, usageErrorf("--wait: want a duration of 0 or more (2m), got %s", f.wait)
	}
	j.filter.CompleteOnly, j.wait = f.completeOnly, f.wait
	j.format = f.format
	if j.out, err = outOf(f.out, j.filter); err != nil {
		return j, err
	}
	return j, nil
}

// formatOfName takes --out's extension for the format when --format is
// not given, and refuses a --format the extension contradicts: a .csv file
// that holds Parquet misleads every reader that opens it by its name.
func formatOfName(f *exportFlags) error {
	named, ok := export.FormatOf(f.out)
	switch {
	case !ok || named == f.format:
	case !f.formatSet:
		f.format = named
	default:
		return usageErrorf("--out %s: the name says %s, --format says %s: give --format %s, or name the file %s",
			f.out, named, f.format, named, export.Extension(f.format))
	}
	return nil
}

// outNames are what --out's name may hold in braces, each a day of the
// export's range, so that a schedule names each file without shell
// arithmetic.
var outNames = map[string]func(store.ExportFilter) time.Time{
	"date":  func(f store.ExportFilter) time.Time { return f.Until },
	"until": func(f store.ExportFilter) time.Time { return f.Until },
	"since": func(f store.ExportFilter) time.Time { return f.Since },
	// last is the last day the window holds a moment of: a window ending at
	// midnight holds nothing of the day that midnight begins.
	"last": func(f store.ExportFilter) time.Time { return f.Until.Add(-time.Millisecond) },
}

// outOf is --out with each name in braces replaced by its UTC day
// (YYYY-MM-DD): {until} (and {date}, its older name) the day of the
// export's end, not included (--until, or now), {last} the last day the
// window holds, {since} that of its start. Any other name in braces is refused, since a
// mistyped one would otherwise name every week's file alike.
func outOf(out string, f store.ExportFilter) (string, error) {
	var b strings.Builder
	for rest := out; rest != ""; {
		before, after, found := strings.Cut(rest, "{")
		b.WriteString(before)
		if !found {
			break
		}
		name, tail, closed := strings.Cut(after, "}")
		day, ok := outNames[name]
		const want = "want {since} (the day it starts), {last} (the last day it holds) or {until} (the day of its end, not included; {date} is the same)"
		if !closed {
			return "", usageErrorf("--out %s: a { without its }: %s", out, want)
		}
		if !ok {
			return "", usageErrorf("--out %s: {%s} is no name of a day: %s", out, name, want)
		}
		b.WriteString(day(f).UTC().Format(time.DateOnly))
		rest = tail
	}
	return b.String(), nil
}

// parseWhen reads a point in time as --since and --until take it: a span
// back from now, in --keep's forms (parseKeep), or a day or a time
// (parseDay). spanned says it was a span.
func parseWhen(flag, s string, now time.Time) (at time.Time, spanned bool, err error) {
	if d, err := parseKeep(s); err == nil {
		return now.Add(-d), true, nil
	}
	if at, err = parseDay(s); err != nil {
		return at, false, usageErrorf("%s: want a span back from now in days (7d), weeks (1w) or hours (24h, 90m), "+
			"a date (2026-11-01, midnight UTC) or an RFC 3339 time (2026-11-01T09:00:00Z), got %q", flag, s)
	}
	return at, false, nil
}

// parseDay reads YYYY-MM-DD (midnight UTC) or an RFC 3339 time.
func parseDay(s string) (time.Time, error) {
	if t, err := time.Parse(time.DateOnly, s); err == nil {
		return t, nil
	}
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		return t, fmt.Errorf("%q is neither YYYY-MM-DD nor an RFC 3339 time", s)
	}
	return t.UTC(), nil
}

func runExport(ctx context.Context, stdout io.Writer, s *settings, f *exportFlags) error {
	job, err := parseExport(f, s.now().UTC())
	if err != nil {
		return err
	}
	if job.out == "-" && job.format == "parquet" && termbar.On(stdout) {
		return usageErrorf("--out: Parquet is binary; give a file (--out FILE) or redirect stdout")
	}
	if job.file, err = checkOut(job.out, f.force); err != nil {
		return err
	}
	db, err := openExisting(ctx, s)
	switch {
	case errors.Is(err, store.ErrNoDatabase):
		// Not an empty window: a scheduled export of a mistyped path would
		// write empty files for ever, each one a success.
		return usageErrorf("--db / INGEST_DB: no database at %s: nothing was exported; name the database the daemon writes (the first `ingest run` creates it)", s.dbName())
	case err != nil:
		return err
	}
	defer db.Close()
	// A signal ends the export between rows; the partial file is removed
	// on the way out, as on any other failure.
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	job.rows, job.log, job.now = new(int64), s.logger, s.clock.Now
	if job.runs, err = settle(ctx, s, db.Store(), job); err != nil {
		return err
	}
	if job.out == "-" {
		err = exportTo(ctx, db.Store(), job, stdout)
	} else {
		err = exportFile(ctx, s, db.Store(), job)
	}
	if err != nil && ctx.Err() != nil {
		return fmt.Errorf("export stopped by a signal: %s was not written", outName(job.out))
	}
	if err != nil {
		return err
	}
	exported(ctx, s, db.Store(), job)
	if *job.rows == 0 {
		return &exitError{code: exitEmpty, err: fmt.Errorf("export: no row in the window, %s written empty (exit 3: not a failure of the export, nor a success to report as one)", outName(job.out))}
	}
	return nil
}

// exported says on stderr what an export wrote: its window, its rows and
// runs, the file with its size (stdout holds the rows themselves), and
// each run it left out and why, so that a window that holds fewer rows
// than the user expected says where the others are.
func exported(ctx context.Context, s *settings, db *store.DB, job exportJob) {
	taken, left := takenRuns(job.runs, job.filter.CompleteOnly)
	attrs := []any{"rows", *job.rows, "format", job.format}
	if job.out == "-" {
		attrs = append(attrs, "out", "stdout")
	} else if fi, err := os.Stat(job.file); err == nil {
		attrs = append(attrs, "out", job.out, "bytes", fi.Size())
	}
	attrs = append(attrs, "since", stamp(job.filter.Since), "until", stamp(job.filter.Until), "runs", taken)
	later, err := laterRuns(ctx, s, db, job.filter)
	if err != nil {
		s.logger.Warn("could not list the runs after the window", ingest.LogErr, err)
	}
	left = append(left, later...)
	if len(left) > 0 {
		attrs = append(attrs, "left_out", leftList(left))
	}
	if *job.rows == 0 {
		// An empty file is what a job that read the wrong window or chart
		// writes too: said, so that a scheduler's log shows it.
		s.logger.Warn("exported no rows: no run of the charts asked for ended in the window", attrs...)
		return
	}
	s.logger.Info("exported", attrs...)
}

// stamp is a window's bound as the log prints it.
func stamp(t time.Time) string { return t.UTC().Format(time.RFC3339) }

func outName(out string) string {
	if out == "-" {
		return "stdout"
	}
	return "--out " + out
}

// exportFile writes beside the file and renames when complete
// (export.WriteFile).
func exportFile(ctx context.Context, s *settings, db *store.DB, job exportJob) error {
	removeLeftovers(s, job.file)
	err := export.WriteFile(job.file, func(w io.Writer) error { return exportTo(ctx, db, job, w) })
	var ce *export.CreateError
	switch {
	case errors.As(err, &ce) && (errors.Is(err, fs.ErrPermission) || errors.Is(err, fs.ErrNotExist)):
		return usageErrorf("--out %s: cannot create a file in %s (%v): make the directory writable by this user, or write elsewhere",
			job.out, filepath.Dir(job.file), errors.Unwrap(ce.Err))
	case errors.As(err, &ce):
		return fmt.Errorf("--out %s: %w", job.out, ce.Err)
	}
	return err
}

// removeLeftovers removes what earlier exports to out left beside it when
// they were killed before they could (SIGKILL, a crash), and says so.
func removeLeftovers(s *settings, out string) {
	gone, err := export.RemoveLeftovers(out)
	for _, l := range gone {
		s.logger.Info("removed the partial file of an earlier export to --out that was killed", "file", l.Name, "bytes", l.Bytes)
	}
	if err != nil {
		s.logger.Warn("could not remove the partial files of earlier exports", "out", out, ingest.LogErr, err)
	}
}

// checkOut refuses an --out whose directory is missing, or which is not a
// regular file nor a link to one (export.Target), before the database is
// opened: the user's words, not those of the temporary file the export
// writes first. It returns the file to write: out, or where its link leads.
func checkOut(out string, force bool) (string, error) {
	if out == "-" {
		return out, nil
	}
	file, err := export.Target(out)
	if err != nil {
		return "", usageErrorf("--out %s: %w", out, err)
	}
	if err := export.CheckPath(file); err != nil {
		return "", usageErrorf("--out %s: %w", out, err)
	}
	if st, err := os.Stat(file); err == nil && !force {
		return "", usageErrorf("--out %s: the file exists (%d bytes): give --force to replace it, or another name", out, st.Size())
	}
	return file, nil
}

// exportTo streams the rows to w in the job's format (export.Write),
// with a progress bar on a terminal.
func exportTo(ctx context.Context, db *store.DB, job exportJob, w io.Writer) error {
	var bar *termbar.Bar
	if termbar.On(os.Stderr) {
		total, err := db.ExportCount(ctx, job.filter)
		if err != nil || job.filter.PerDay {
			total = -1 // a day's rows are fewer than its runs' entries
		}
		bar = termbar.New(os.Stderr, total, "export "+job.format, progressbar.OptionThrottle(100*time.Millisecond))
	}
	defer bar.Finish()
	var logged *progressLog
	if bar == nil && job.log != nil {
		logged = newProgressLog(job.log, "export: writing rows", job.now)
	}
	err := export.Write(ctx, db, job.filter, job.format, w, func() {
		*job.rows++
		bar.Add()
		if logged != nil {
			logged.at(*job.rows, -1)
		}
	})
	if err != nil {
		return err
	}
	return recheck(ctx, db, job)
}

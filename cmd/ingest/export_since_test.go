package main

import (
	"bytes"
	"context"
	"encoding/csv"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/ingestworks/ingest/export"
	"github.com/ingestworks/ingest/internal/rig/storetest"
)

// exportNow is the house clock's now in these tests: a Monday, seconds
// into the minute a weekly cron line starts the export in.
var exportNow = time.Date(2026, 11, 30, 6, 0, 40, 0, time.UTC)

// --since and --until take --keep's spans, counted back from the minute
// of the house clock's now; with a span for --since the end defaults to
// that minute; a day or a time reads as before.
func TestExportSinceAndUntilTakeSpans(t *testing.T) {
	t.Parallel()
	minute := exportNow.Truncate(time.Minute)
	for _, tc := range []struct {
		name, since, until string
		want               [2]time.Time
	}{
		{"days", "7d", "", [2]time.Time{minute.Add(-7 * 24 * time.Hour), minute}},
		{"a week", "1w", "", [2]time.Time{minute.Add(-7 * 24 * time.Hour), minute}},
		{"hours", "24h", "", [2]time.Time{minute.Add(-24 * time.Hour), minute}},
		{"a span each", "2w", "1w", [2]time.Time{minute.Add(-14 * 24 * time.Hour), minute.Add(-7 * 24 * time.Hour)}},
		{"a date and a span", "2026-11-01", "1d", [2]time.Time{time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC), minute.Add(-24 * time.Hour)}},
		{"a date ends now", "2026-11-01", "", [2]time.Time{time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC), exportNow}},
		{"a time", "2026-11-29T12:00:00+01:00", "2026-11-30", [2]time.Time{time.Date(2026, 11, 29, 11, 0, 0, 0, time.UTC), time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			job, err := parseExport(&exportFlags{since: tc.since, until: tc.until, format: "csv", out: "-", per: "run"}, exportNow)
			if err != nil {
				t.Fatal(err)
			}
			if got := [2]time.Time{job.filter.Since, job.filter.Until}; !got[0].Equal(tc.want[0]) || !got[1].Equal(tc.want[1]) {
				t.Errorf("--since %s --until %q: [%v, %v), want [%v, %v)", tc.since, tc.until, got[0], got[1], tc.want[0], tc.want[1])
			}
		})
	}
}

// A value that is no span, day nor time is a usage error (exit 2) that
// names its flag and every form the flag takes.
func TestExportBadSinceNamesEveryForm(t *testing.T) {
	t.Parallel()
	for _, f := range []exportFlags{{since: "7 days"}, {since: "7d", until: "yesterday"}, {since: "0d"}, {since: "-1w"}} {
		f.format, f.out, f.per = "csv", "-", "run"
		_, err := parseExport(&f, exportNow)
		flag := "--since"
		if f.until != "" {
			flag = "--until"
		}
		var ee *exitError
		if !errors.As(err, &ee) || ee.code != exitUsage {
			t.Fatalf("--since %q --until %q: %v, want a usage error", f.since, f.until, err)
		}
		for _, want := range []string{flag + ":", "7d", "1w", "24h", "2026-11-01", "RFC 3339"} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("--since %q --until %q: %q does not say %q", f.since, f.until, err, want)
			}
		}
	}
}

// A --since to come, given alone, is --since's fault, said so, not that
// of an --until the user never gave; given with an --until before it,
// --until's.
func TestExportFutureSinceNamesItself(t *testing.T) {
	t.Parallel()
	for _, f := range []exportFlags{{since: "2027-01-01"}, {since: "2027-01-01", until: "2026-12-01"}} {
		f.format, f.out, f.per = "csv", "-", "run"
		_, err := parseExport(&f, exportNow)
		var ee *exitError
		if !errors.As(err, &ee) || ee.code != exitUsage {
			t.Fatalf("--since %q --until %q: %v, want a usage error", f.since, f.until, err)
		}
		want, not := "--since 2027-01-01T00:00:00Z is not before now", "--until"
		if f.until != "" {
			want, not = "--until (2026-12-01T00:00:00Z) must be after --since", "not before now"
		}
		if msg := err.Error(); !strings.HasPrefix(msg, want) || strings.Contains(msg, not) {
			t.Errorf("--since %q --until %q: %q, want it to begin %q and not say %q", f.since, f.until, msg, want, not)
		}
	}
}

// Two weekly exports a week apart, each started seconds into its minute,
// select every run once between them: the run at the very minute the
// first one ran goes to the second week, and the one of the second
// export's own minute to the next.
func TestExportWeeksMeetEndToEnd(t *testing.T) {
	t.Parallel()
	db := storetest.Open(t)
	week := 7 * 24 * time.Hour
	minute := exportNow.Truncate(time.Minute)
	starts := map[string]time.Time{
		"before": minute.Add(-2*week - time.Second), "first": minute.Add(-2 * week), "last-of-1": minute.Add(-week - time.Second),
		"edge": minute.Add(-week), "inside": minute.Add(-time.Hour), "now": minute.Add(10 * time.Second),
	}
	for name, at := range starts {
		storetest.Finished(t, db, "US", at, storetest.Video(name, name, at))
	}
	videos := func(now time.Time) string {
		job, err := parseExport(&exportFlags{since: "1w", format: "csv", out: "-", per: "run"}, now)
		if err != nil {
			t.Fatal(err)
		}
		var b bytes.Buffer
		if err := export.Write(context.Background(), db, job.filter, "csv", &b, nil); err != nil {
			t.Fatal(err)
		}
		recs, err := csv.NewReader(&b).ReadAll()
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, r := range recs[1:] {
			ids = append(ids, r[0])
		}
		return strings.Join(ids, " ")
	}
	if got, want := videos(exportNow.Add(-week+5*time.Second)), "first last-of-1"; got != want {
		t.Errorf("the first week: %s, want %s", got, want)
	}
	if got, want := videos(exportNow), "edge inside"; got != want {
		t.Errorf("the second week: %s, want %s", got, want)
	}
}

// --out's {date} is the day the export ends and {since} the day it
// starts, so that a weekly job names each week's file; any other name in
// braces is refused, naming --out and the names it takes.
func TestExportOutNamesItsDays(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ since, until, out, want string }{
		{"7d", "", "charts-{date}.csv", "charts-2026-11-30.csv"},
		{"1w", "", "/data/{since}_{date}.parquet", "/data/2026-11-23_2026-11-30.parquet"},
		{"2026-11-01", "2026-12-01", "nov-{since}.csv", "nov-2026-11-01.csv"},
		{"2026-11-01", "2026-12-01", "{date}{date}", "2026-12-012026-12-01"},
		{"2026-11-01", "2026-12-01", "nov-{since}_{last}.csv", "nov-2026-11-01_2026-11-30.csv"},
		{"2026-11-01", "2026-12-01", "to-{until}.csv", "to-2026-12-01.csv"},
		{"2026-11-01", "2026-11-01T09:30:00Z", "{last}.csv", "2026-11-01.csv"},
		{"7d", "", "plain.csv", "plain.csv"},
		{"7d", "", "-", "-"},
	} {
		job, err := parseExport(&exportFlags{since: tc.since, until: tc.until, format: "csv", out: tc.out, per: "run"}, exportNow)
		if err != nil {
			t.Fatal(err)
		}
		if job.out != tc.want {
			t.Errorf("--since %s --until %q --out %s: %s, want %s", tc.since, tc.until, tc.out, job.out, tc.want)
		}
	}
	for _, out := range []string{"charts-{data}.csv", "charts-{date.csv", "{}.csv"} {
		_, err := parseExport(&exportFlags{since: "7d", format: "csv", out: out, per: "run"}, exportNow)
		var ee *exitError
		if !errors.As(err, &ee) || ee.code != exitUsage || !strings.Contains(err.Error(), "--out "+out) ||
			!strings.Contains(err.Error(), "{date}") || !strings.Contains(err.Error(), "{since}") {
			t.Errorf("--out %s: %v, want a usage error naming --out, {date} and {since}", out, err)
		}
	}
}

// An --out name's extension names the format when --format is not given,
// and one that contradicts --format is refused, naming both.
func TestExportFormatOfTheName(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		out, format string
		set         bool
		want        string // the format, or the error's words
	}{
		{"x.parquet", "csv", false, "parquet"},
		{"charts-{date}.JSONL", "csv", false, "jsonl"},
		{"x.ndjson", "csv", false, "jsonl"},
		{"x.txt", "csv", false, "csv"},
		{"-", "jsonl", true, "jsonl"},
		{"x.csv", "csv", true, "csv"},
		{"x.csv", "parquet", true, "--out x.csv: the name says csv, --format says parquet: give --format csv, or name the file .parquet"},
	} {
		job, err := parseExport(&exportFlags{since: "7d", format: tc.format, formatSet: tc.set, out: tc.out, per: "run"}, exportNow)
		var ee *exitError
		switch {
		case strings.HasPrefix(tc.want, "--out"):
			if !errors.As(err, &ee) || ee.code != exitUsage || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("--out %s --format %s: %v, want a usage error saying %q", tc.out, tc.format, err, tc.want)
			}
		case err != nil || job.format != tc.want:
			t.Errorf("--out %s --format %s (given %v): %q, %v; want %s", tc.out, tc.format, tc.set, job.format, err, tc.want)
		}
	}
}

// export --help names every column the export writes, in its order.
func TestExportHelpNamesEveryColumn(t *testing.T) {
	t.Parallel()
	help := strings.Join(strings.Fields(newExportCmd(&settings{}).Long), " ")
	at := 0
	for _, col := range export.Columns() {
		i := strings.Index(help[at:], col)
		if i < 0 {
			t.Errorf("export --help does not name %s after the columns before it", col)
			continue
		}
		at += i + len(col)
	}
}

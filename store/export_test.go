package store

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/ingestworks/ingest"
)

// TestExport reads two runs of one day back run by run and day by day:
// the day gives each video once per chart, with the rank of its last run
// that day, by chart and rank.
func TestExport(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	eachStore(t, func(t *testing.T, db *DB) {
		a, b, c := vid("a", "A"), vid("b", "B"), vid("c", "C")
		morning, noon := t0.Add(-8*time.Hour), t0.Add(3*time.Hour)
		r1 := run(t, db, ingest.Trending, "US", morning, page(ingest.Trending, "US", 1, morning, a, b))
		r2 := run(t, db, ingest.Trending, "US", noon, page(ingest.Trending, "US", 1, noon, c, a))
		r3 := run(t, db, ingest.Trending, "GB", noon, page(ingest.Trending, "GB", 1, noon, b))
		for _, id := range []int64{r1, r2, r3} {
			if err := db.FinishRun(ctx, id, ingest.RunEnd{Status: ingest.StatusCompleted, At: noon}); err != nil {
				t.Fatal(err)
			}
		}
		day := t0.Truncate(24 * time.Hour)
		f := ExportFilter{Since: day, Until: day.Add(24 * time.Hour), Region: "US"}
		if got, want := exported(t, db, f), "a US 1 r1|b US 2 r1|c US 1 r2|a US 2 r2"; got != want {
			t.Errorf("by run: %s, want %s", got, want)
		}
		f.PerDay, f.Region = true, ""
		if got, want := exported(t, db, f), "b GB 1 r3|c US 1 r2|a US 2 r2|b US 2 r1"; got != want {
			t.Errorf("by day: %s, want %s", got, want)
		}
		// a day's row carries its run's start, which dates it in the
		// region's calendar
		started := map[int64]time.Time{r1: morning.Truncate(time.Second), r2: noon.Truncate(time.Second), r3: noon.Truncate(time.Second)}
		if err := db.Export(ctx, f, func(r ExportRow) error {
			if !r.RunAt.Equal(started[r.RunID]) || !r.TrendingAt.Equal(day) {
				t.Errorf("by day: %s of run %d at %s, run at %s; want the day and the run's start %s", r.ID, r.RunID, r.TrendingAt, r.RunAt, started[r.RunID])
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		if n, err := db.ExportCount(ctx, ExportFilter{Since: day, Until: day.Add(24 * time.Hour), Unfiltered: true}); err != nil || n != 5 {
			t.Errorf("ExportCount = %d, %v; want 5", n, err)
		}
	})
}

// An export reads only the runs that have ended, each row saying how its
// run ended and whether the chart was whole; a run in flight is left out
// until it ends, and ExportRuns names it meanwhile. Windows that meet end
// to end, each read once its runs have ended, hold every row once.
func TestExportTakesOnlyEndedRuns(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	eachStore(t, func(t *testing.T, db *DB) {
		a, b, c := vid("a", "A"), vid("b", "B"), vid("c", "C")
		first, second := t0, t0.Add(time.Minute)
		whole := run(t, db, ingest.Trending, "US", first, page(ingest.Trending, "US", 1, first, a, b))
		cut := run(t, db, ingest.Trending, "GB", first.Add(time.Second), page(ingest.Trending, "GB", 1, first, c))
		flight := run(t, db, ingest.Trending, "US", second, page(ingest.Trending, "US", 1, second, b))
		end := func(id int64, status ingest.RunStatus) {
			t.Helper()
			if err := db.FinishRun(ctx, id, ingest.RunEnd{Status: status, At: second}); err != nil {
				t.Fatal(err)
			}
		}
		end(whole, ingest.StatusCompleted)
		end(cut, ingest.StatusStopped)
		f := ExportFilter{Since: first, Until: second.Add(time.Minute)}
		if got, want := exported(t, db, f), "a US 1 r1|b US 2 r1|c GB 1 r2"; got != want {
			t.Errorf("with run %d in flight: %s, want %s", flight, got, want)
		}
		runs, err := db.ExportRuns(ctx, f)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := fmt.Sprint(runs), fmt.Sprintf("[{%d US  completed %s 2} {%d GB  stopped %s 1} {%d US  running %s 1}]",
			whole, first.Format("2006-01-02 15:04:05 -0700 MST"), cut, first.Add(time.Second).Format("2006-01-02 15:04:05 -0700 MST"),
			flight, second.Format("2006-01-02 15:04:05 -0700 MST")); got != want {
			t.Errorf("ExportRuns = %s, want %s", got, want)
		}
		end(flight, ingest.StatusCompleted)
		var rows []string
		for _, w := range []ExportFilter{{Since: first, Until: second}, {Since: second, Until: second.Add(time.Minute)}} {
			if err := db.Export(ctx, w, func(r ExportRow) error {
				rows = append(rows, fmt.Sprintf("%s r%d %s %v", r.ID, r.RunID, r.RunStatus, r.Complete))
				return nil
			}); err != nil {
				t.Fatal(err)
			}
		}
		if got, want := fmt.Sprint(rows), "[a r1 completed true b r1 completed true c r2 stopped false b r3 completed true]"; got != want {
			t.Errorf("two windows: %s, want %s", got, want)
		}
		f.CompleteOnly = true
		if got, want := exported(t, db, f), "a US 1 r1|b US 2 r1|b US 1 r3"; got != want {
			t.Errorf("complete only: %s, want %s", got, want)
		}
		f.PerDay = true
		if got, want := exported(t, db, f), "a US 1 r1|b US 1 r3"; got != want {
			t.Errorf("complete only, per day: %s, want %s", got, want)
		}
	})
}

// exported is what Export gives, a row as "video region rank run".
func exported(t *testing.T, db *DB, f ExportFilter) string {
	t.Helper()
	var out string
	err := db.Export(context.Background(), f, func(r ExportRow) error {
		if out != "" {
			out += "|"
		}
		out += fmt.Sprintf("%s %s %d r%d", r.ID, r.Region, r.Rank, r.RunID)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// An export carries each video's languages, run by run and day by day.
func TestExportLanguages(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	eachStore(t, func(t *testing.T, db *DB) {
		day := t0.Truncate(24 * time.Hour)
		id := run(t, db, ingest.Trending, "IN", t0, page(ingest.Trending, "IN", 1, t0, langVid("a", "hi-IN", "en"), langVid("b", "", "")))
		if err := db.FinishRun(ctx, id, ingest.RunEnd{Status: ingest.StatusCompleted, At: t0}); err != nil {
			t.Fatal(err)
		}
		for _, perDay := range []bool{false, true} {
			var got []string
			f := ExportFilter{Since: day, Until: day.Add(24 * time.Hour), PerDay: perDay}
			if err := db.Export(ctx, f, func(r ExportRow) error {
				got = append(got, r.ID+":"+r.AudioLanguage+"/"+r.Language)
				return nil
			}); err != nil {
				t.Fatal(err)
			}
			if fmt.Sprint(got) != "[a:hi-IN/en b:/]" {
				t.Errorf("per day %v: %v, want [a:hi-IN/en b:/]", perDay, got)
			}
		}
	})
}

// An export names each row's category in English, from any region whose
// names were asked in English (the names are the same in every region),
// and in the row's region's own language as that region's were asked; a
// day's row says it is one.
func TestExportNamesTheCategory(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	eachStore(t, func(t *testing.T, db *DB) {
		if err := db.SaveCategories(ctx, "US", []ingest.Category{{ID: "10", Title: "Music"}, {ID: "20", Title: "Gaming"}}, t0); err != nil {
			t.Fatal(err)
		}
		if err := db.SaveCategories(ctx, "DE", []ingest.Category{{ID: "10", Title: "Musik", Language: "de"}}, t0); err != nil {
			t.Fatal(err)
		}
		game, odd := vid("g", "G"), vid("o", "O")
		game.CategoryID, odd.CategoryID = "20", "99"
		for _, region := range []string{"US", "DE"} {
			id := run(t, db, ingest.Trending, region, t0, page(ingest.Trending, region, 1, t0, vid("m", "M"), game, odd))
			if err := db.FinishRun(ctx, id, ingest.RunEnd{Status: ingest.StatusCompleted, At: t0}); err != nil {
				t.Fatal(err)
			}
		}
		day := t0.Truncate(24 * time.Hour)
		for _, perDay := range []bool{false, true} {
			got := map[string]string{}
			f := ExportFilter{Since: day, Until: day.Add(24 * time.Hour), PerDay: perDay}
			if err := db.Export(ctx, f, func(r ExportRow) error {
				got[r.Region+" "+r.ID] = r.CategoryTitle + "/" + r.CategoryTitleLocal
				if r.Daily != perDay {
					t.Errorf("per day %v: a row says Daily %v", perDay, r.Daily)
				}
				return nil
			}); err != nil {
				t.Fatal(err)
			}
			want := map[string]string{"US m": "Music/Music", "US g": "Gaming/Gaming", "US o": "/",
				"DE m": "Music/Musik", "DE g": "Gaming/", "DE o": "/"}
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("per day %v: %v, want %v", perDay, got, want)
			}
		}
	})
}

// A run whose chart moved between its pages says which ranks it lost: a
// video met on the first page and again on the second keeps its first
// rank, and the place it took on the second is held by no entry; the run's message names
// it, and each of the run's rows counts it. A short page (fewer than
// PageSize) loses nothing.
func TestExportSaysTheRanksARunLost(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	eachStore(t, func(t *testing.T, db *DB) {
		var first []ingest.Video
		for i := range 30 { // a short page: places 31 to 50 are no loss
			first = append(first, vid(fmt.Sprintf("v%02d", i+1), "V"))
		}
		moved := run(t, db, ingest.Trending, "US", t0,
			page(ingest.Trending, "US", 1, t0, first...),
			page(ingest.Trending, "US", 2, t0, vid("w1", "W"), first[9], vid("w3", "W")))
		whole := run(t, db, ingest.Trending, "GB", t0, page(ingest.Trending, "GB", 1, t0, first...))
		for _, id := range []int64{moved, whole} {
			if err := db.FinishRun(ctx, id, ingest.RunEnd{Status: ingest.StatusCompleted, At: t0}); err != nil {
				t.Fatal(err)
			}
		}
		msg := func(id int64) string {
			var m string
			if err := db.r.QueryRowContext(ctx, `SELECT message FROM runs WHERE id = ?`, id).Scan(&m); err != nil {
				t.Fatal(err)
			}
			return m
		}
		if got, want := msg(moved), LostRanksMessage([]int{52}); got != want || !strings.Contains(got, "rank 52 lost") {
			t.Errorf("the moved run's message %q, want %q", got, want)
		}
		if got := msg(whole); got != "" {
			t.Errorf("the whole run's message %q, want none", got)
		}
		day := t0.Truncate(24 * time.Hour)
		for _, perDay := range []bool{false, true} {
			lost := map[string]int{}
			f := ExportFilter{Since: day, Until: day.Add(24 * time.Hour), PerDay: perDay}
			if err := db.Export(ctx, f, func(r ExportRow) error {
				if r.RanksLost != map[string]int{"US": 1, "GB": 0}[r.Region] {
					t.Errorf("per day %v: %s %s rank %d says %d ranks lost", perDay, r.Region, r.ID, r.Rank, r.RanksLost)
				}
				lost[r.Region]++
				return nil
			}); err != nil {
				t.Fatal(err)
			}
			if lost["US"] != 32 || lost["GB"] != 30 {
				t.Errorf("per day %v: rows %v, want 32 of US (33 met, one twice) and 30 of GB", perDay, lost)
			}
		}
	})
}

package store

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ingestworks/ingest"
)

// BenchmarkRollupTriggers saves chart pages of videos already stored, as
// every hourly run does, into two databases that differ only in the
// daily rollup's triggers (video_days), one page into each in turn, and
// reports each one's time a page and their ratio: what keeping the rollup
// costs a page save.
func BenchmarkRollupTriggers(b *testing.B) {
	ctx := context.Background()
	with, without := openTest(b), openTest(b)
	for _, trig := range []string{"video_days_entry", "video_days_entry_again", "video_days_stat", "video_days_stat_again"} {
		if _, err := without.Writer().Exec(`DROP TRIGGER ` + trig); err != nil {
			b.Fatal(err)
		}
	}
	c := newCorpus(1)
	chart := make([]ingest.Video, 4*PageSize)
	for i := range chart {
		chart[i] = c.video()
	}
	var took [2]time.Duration
	at := t0
	for n := 0; b.Loop(); n++ {
		if n%4 == 0 {
			at = at.Add(time.Hour)
		}
		for k, db := range [2]*DB{with, without} {
			if n%4 == 0 {
				run(b, db, ingest.Trending, "US", at)
			}
			p := page(ingest.Trending, "US", n%4+1, at, grown(chart[n%4*PageSize:(n%4+1)*PageSize], n)...)
			id := lastRun(b, db)
			start := time.Now()
			if err := db.SavePage(ctx, id, p); err != nil {
				b.Fatal(err)
			}
			took[k] += time.Since(start)
		}
	}
	per := func(d time.Duration) float64 { return float64(d.Microseconds()) / float64(b.N) }
	b.ReportMetric(per(took[0]), "with-us/page")
	b.ReportMetric(per(took[1]), "without-us/page")
	b.ReportMetric(float64(took[0])/float64(took[1]), "with/without")
	b.ReportMetric(0, "ns/op")
}

// grown is vs with their view counts moved on by n, so that every save
// changes counts as an hour's run does.
func grown(vs []ingest.Video, n int) []ingest.Video {
	out := make([]ingest.Video, len(vs))
	for i, v := range vs {
		views := *v.ViewCount + int64(n*1000+i)
		v.ViewCount = &views
		out[i] = v
	}
	return out
}

func lastRun(b *testing.B, db *DB) int64 {
	var id int64
	if err := db.Reader().QueryRow(`SELECT max(id) FROM runs`).Scan(&id); err != nil {
		b.Fatal(err)
	}
	return id
}

// BenchmarkRollupPerPage saves the same chart pages as
// BenchmarkRollupTriggers into two databases, one keeping the daily
// rollup by its trigger on each entry, the other without the entries'
// triggers and with the rollup's own upsert run once a page over the
// page's entries, its text the trigger's as the schema holds it. It
// reports each one's time a page and their ratio, and fails unless both
// hold the same rollup: whether one statement a page instead of a trigger
// a row is worth a migration.
func BenchmarkRollupPerPage(b *testing.B) {
	ctx := context.Background()
	trig, page1 := openTest(b), openTest(b)
	var body string
	if err := trig.Reader().QueryRow(`SELECT sql FROM sqlite_master WHERE type = 'trigger' AND name = 'video_days_entry'`).Scan(&body); err != nil {
		b.Fatal(err)
	}
	perPage, err := rollupOfPage(body)
	if err != nil {
		b.Fatal(err)
	}
	for _, t := range []string{"video_days_entry", "video_days_entry_again"} {
		if _, err := page1.Writer().Exec(`DROP TRIGGER ` + t); err != nil {
			b.Fatal(err)
		}
	}
	c := newCorpus(1)
	chart := make([]ingest.Video, 4*PageSize)
	for i := range chart {
		chart[i] = c.video()
	}
	var took [2]time.Duration
	at := t0
	for n := 0; b.Loop(); n++ {
		if n%4 == 0 {
			at = at.Add(time.Hour)
		}
		for k, db := range [2]*DB{trig, page1} {
			if n%4 == 0 {
				run(b, db, ingest.Trending, "US", at)
			}
			p := page(ingest.Trending, "US", n%4+1, at, grown(chart[n%4*PageSize:(n%4+1)*PageSize], n)...)
			id := lastRun(b, db)
			start := time.Now()
			if err := db.SavePage(ctx, id, p); err != nil {
				b.Fatal(err)
			}
			if k == 1 {
				if _, err := db.Writer().Exec(perPage, id, "US", n%4*PageSize+1, (n%4+1)*PageSize); err != nil {
					b.Fatal(err)
				}
			}
			took[k] += time.Since(start)
		}
	}
	b.StopTimer()
	const rollup = `SELECT vid, region, category, day_ms, first_ms, last_ms, entries, best_rank, last_rank, peak_ms,
  views, likes, comments FROM video_days ORDER BY day_ms, vid, region, category`
	want, got := rollupRows(b, trig, rollup), rollupRows(b, page1, rollup)
	if len(want) == 0 || !slices.Equal(want, got) {
		b.Fatalf("the rollup by one statement a page (%d rows) is not the triggers' (%d rows)", len(got), len(want))
	}
	per := func(d time.Duration) float64 { return float64(d.Microseconds()) / float64(b.N) }
	b.ReportMetric(per(took[0]), "trigger-us/page")
	b.ReportMetric(per(took[1]), "page-us/page")
	b.ReportMetric(float64(took[1])/float64(took[0]), "page/trigger")
	b.ReportMetric(0, "ns/op")
}

// rollupOfPage turns the entries' rollup trigger (its CREATE TRIGGER text)
// into one statement over a page's entries: run ?1, region ?2, ranks ?3
// to ?4, each read from trending_entries where the trigger read new.
func rollupOfPage(trigger string) (string, error) {
	_, body, ok := strings.Cut(trigger, " BEGIN")
	end := strings.LastIndex(body, "END") // the CASEs end too
	ok2 := end >= 0
	if ok2 {
		body = body[:end]
	}
	values, upsert, ok3 := strings.Cut(body, ")\n  ON CONFLICT")
	_, values, ok4 := strings.Cut(values, "VALUES (")
	if !ok || !ok2 || !ok3 || !ok4 {
		return "", fmt.Errorf("video_days_entry: not the trigger's shape: %s", trigger)
	}
	return "INSERT INTO video_days SELECT " + strings.ReplaceAll(values, "new.", "") +
		" FROM trending_entries WHERE run_id = ?1 AND region = ?2 AND rank BETWEEN ?3 AND ?4\n  ON CONFLICT " +
		strings.TrimSuffix(strings.TrimSpace(upsert), ";"), nil
}

// rollupRows is query's rows on db, each as its columns' text.
func rollupRows(b *testing.B, db *DB, query string) []string {
	rs, err := db.Reader().Query(query)
	if err != nil {
		b.Fatal(err)
	}
	defer rs.Close()
	cols, _ := rs.Columns()
	var out []string
	for rs.Next() {
		vs := make([]sql.NullString, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vs {
			ptrs[i] = &vs[i]
		}
		if err := rs.Scan(ptrs...); err != nil {
			b.Fatal(err)
		}
		out = append(out, fmt.Sprint(vs))
	}
	if err := rs.Err(); err != nil {
		b.Fatal(err)
	}
	return out
}

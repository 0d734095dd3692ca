package store_test

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/internal/rig/pgtest"
	"github.com/ingestworks/ingest/internal/rig/yeardb"
	"github.com/ingestworks/ingest/ledger"
	"github.com/ingestworks/ingest/store"
)

// BenchmarkPGYear copies the SQLite stores of INGEST_BENCH_DAY_DB and
// INGEST_BENCH_YEAR_DB (internal/rig/yeardb's one day and year, as
// scripts/bench-scale.sh caches them) into two PostgreSQL databases, then
// times the store calls behind the commands and routes of the SQLite
// year table, with each database's picks, day and year interleaved. It
// prints how long each copy took and a table of medians (of
// INGEST_BENCH_ROUNDS rounds, 11 unless set) with the year/day ratios, and
// reports them as metrics of one sub-benchmark per call. Run it with
// INGEST_PGTEST_DURABLE=1, as the other store benchmarks are.
//
// With INGEST_BENCH_PG_DAY_URL and INGEST_BENCH_PG_YEAR_URL it copies into
// those databases instead, once: a database that holds videos already is
// timed as it is, so that a change to a query can be timed again in
// seconds (a new schema step is applied when the store opens it).
func BenchmarkPGYear(b *testing.B) {
	day, year := os.Getenv("INGEST_BENCH_DAY_DB"), os.Getenv("INGEST_BENCH_YEAR_DB")
	if day == "" || year == "" {
		b.Skip("INGEST_BENCH_DAY_DB and INGEST_BENCH_YEAR_DB name the SQLite databases to copy (scripts/bench-scale.sh builds them)")
	}
	rounds := 11
	if n, err := strconv.Atoi(os.Getenv("INGEST_BENCH_ROUNDS")); err == nil && n > 0 {
		rounds = n
	}
	ctx := context.Background()
	sides := make([]pgYearSide, 2)
	kept := []string{os.Getenv("INGEST_BENCH_PG_DAY_URL"), os.Getenv("INGEST_BENCH_PG_YEAR_URL")}
	for i, path := range []string{day, year} {
		p, err := yeardb.Pick(ctx, path)
		if err != nil {
			b.Fatal(err)
		}
		load, url := store.LoadPG, kept[i]
		if url != "" {
			load = store.LoadPGOnce
		} else {
			url = pgtest.URL(b)
		}
		db, counts, took, err := load(ctx, path, url)
		if err != nil {
			b.Fatalf("copy %s into PostgreSQL: %v", path, err)
		}
		b.Cleanup(func() { db.Close() })
		fmt.Printf("copied (or kept) %s in PostgreSQL, %.1f s: %d videos, %d chart entries, %d tracked counts, %d rollup rows\n",
			path, took.Seconds(), counts["videos"], counts["trending_entries"], counts["video_stats"], counts["video_days"])
		sides[i] = pgYearSide{db: db, p: p}
	}
	ms := make([][2]float64, len(pgYearCalls))
	for k, c := range pgYearCalls {
		var took [2][]time.Duration
		for r := -1; r < rounds; r++ { // round -1 warms the caches
			for i, s := range sides {
				start := time.Now()
				if err := c.call(ctx, s.db, s.p); err != nil {
					b.Fatalf("%s: %v", c.name, err)
				}
				if r >= 0 {
					took[i] = append(took[i], time.Since(start))
				}
			}
		}
		ms[k] = [2]float64{median(took[0]), median(took[1])}
	}
	fmt.Printf("%-20s %10s %10s %8s\n", "call", "day ms", "year ms", "ratio")
	for k, c := range pgYearCalls {
		d, y := ms[k][0], ms[k][1]
		fmt.Printf("%-20s %10.2f %10.2f %8.2f\n", c.name, d, y, y/d)
	}
	for k, c := range pgYearCalls {
		d, y := ms[k][0], ms[k][1]
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
			}
			b.ReportMetric(d, "day-ms")
			b.ReportMetric(y, "year-ms")
			b.ReportMetric(y/d, "year/day")
		})
	}
}

type pgYearSide struct {
	db *store.DB
	p  yeardb.Picks
}

// pgYearCalls are what each command and route asks the store, with the
// arguments they pass it; history's spans end at the data's end, not at
// the clock's, and the exports are of the last day. video-chart-all asks
// for each video of today's US chart in turn, in one call.
var pgYearCalls = []struct {
	name string
	call func(context.Context, *store.DB, yeardb.Picks) error
}{
	{"report", func(ctx context.Context, db *store.DB, p yeardb.Picks) error {
		if _, err := ledger.New(db).Calls(ctx, yeardb.QuotaKey, p.End.Add(-24*time.Hour)); err != nil {
			return err
		}
		if _, err := db.LastRuns(ctx, ingest.Trending); err != nil {
			return err
		}
		if _, _, err := ledger.New(db).Schedule(ctx); err != nil {
			return err
		}
		_, err := db.Size(ctx)
		return err
	}},
	{"search", searchCall("football", "", 20)},
	{"search-region", searchCall("football", "GB", 20)},
	{"search-rare", func(ctx context.Context, db *store.DB, p yeardb.Picks) error {
		return searchCall(p.Rare, "", 20)(ctx, db, p)
	}},
	{"api-search-common", apiSearchCall("football highlights", "", 20)},
	{"api-search-rare", func(ctx context.Context, db *store.DB, p yeardb.Picks) error {
		return apiSearchCall(p.Rare, "", 20)(ctx, db, p)
	}},
	{"api-search-region", apiSearchCall("official", "GB", 50)},
	{"history-7d", func(ctx context.Context, db *store.DB, p yeardb.Picks) error {
		return found(db.VideoHistory(ctx, p.Busiest, p.End.Add(-7*24*time.Hour)))
	}},
	{"history-all", func(ctx context.Context, db *store.DB, p yeardb.Picks) error {
		return found(db.VideoHistory(ctx, p.Busiest, time.Time{}))
	}},
	{"video-busiest", func(ctx context.Context, db *store.DB, p yeardb.Picks) error {
		return videoCall(ctx, db, p.Busiest)
	}},
	{"video-top", func(ctx context.Context, db *store.DB, p yeardb.Picks) error {
		return videoCall(ctx, db, p.Chart[0])
	}},
	{"video-old", func(ctx context.Context, db *store.DB, p yeardb.Picks) error {
		return videoCall(ctx, db, p.Old)
	}},
	{"video-chart-all", func(ctx context.Context, db *store.DB, p yeardb.Picks) error {
		for _, id := range p.Chart {
			if err := videoCall(ctx, db, id); err != nil {
				return err
			}
		}
		return nil
	}},
	{"chart-latest", func(ctx context.Context, db *store.DB, p yeardb.Picks) error {
		_, err := db.Chart(ctx, store.ChartQuery{Region: "US", Category: "", At: time.Time{}, Limit: 200})
		return err
	}},
	{"chart-at-mid", func(ctx context.Context, db *store.DB, p yeardb.Picks) error {
		_, err := db.Chart(ctx, store.ChartQuery{Region: "DE", Category: "", At: p.Mid, Limit: 200})
		return err
	}},
	{"export-day", exportCall(false)},
	{"export-per-day", exportCall(true)},
	{"runs", func(ctx context.Context, db *store.DB, p yeardb.Picks) error {
		_, err := db.ListRuns(ctx, store.RunFilter{Limit: 51})
		return err
	}},
	{"runs-region", func(ctx context.Context, db *store.DB, p yeardb.Picks) error {
		_, err := db.ListRuns(ctx, store.RunFilter{Region: "FR", Kind: ingest.Trending, Limit: 201})
		return err
	}},
}

// searchCall is the search command's call.
func searchCall(q, region string, limit int) func(context.Context, *store.DB, yeardb.Picks) error {
	return func(ctx context.Context, db *store.DB, _ yeardb.Picks) error {
		hits, err := db.Search(ctx, q, store.SearchOptions{Region: region, Limit: limit})
		if err == nil && len(hits) == 0 {
			err = fmt.Errorf("no hits for %q", q)
		}
		return err
	}
}

// apiSearchCall is the search route's: the hits and their count.
func apiSearchCall(q, region string, limit int) func(context.Context, *store.DB, yeardb.Picks) error {
	return func(ctx context.Context, db *store.DB, p yeardb.Picks) error {
		hits, _, err := db.SearchCounted(ctx, q, store.SearchOptions{Region: region, Limit: limit}, 1000)
		if err == nil && len(hits) == 0 {
			err = fmt.Errorf("no hits for %q", q)
		}
		return err
	}
}

// exportCall is the export command's, of the data's last day.
func exportCall(perDay bool) func(context.Context, *store.DB, yeardb.Picks) error {
	return func(ctx context.Context, db *store.DB, p yeardb.Picks) error {
		f := store.ExportFilter{Since: p.End.Truncate(24 * time.Hour), Until: p.End.Add(time.Hour), PerDay: perDay}
		n := 0
		err := db.Export(ctx, f, func(store.ExportRow) error { n++; return nil })
		if err == nil && n == 0 {
			err = fmt.Errorf("nothing exported")
		}
		return err
	}
}

// videoCall is the video route's (API and page): the video's history and
// its recent entries.
func videoCall(ctx context.Context, db *store.DB, id string) error {
	if err := found(db.VideoHistory(ctx, id, time.Time{})); err != nil {
		return err
	}
	_, _, err := db.RecentEntries(ctx, id, 2000)
	return err
}

func found(_ store.History, ok bool, err error) error {
	if err == nil && !ok {
		err = fmt.Errorf("video not found")
	}
	return err
}

func median(d []time.Duration) float64 {
	s := slices.Clone(d)
	slices.Sort(s)
	m := s[len(s)/2]
	if len(s)%2 == 0 {
		m = (s[len(s)/2-1] + m) / 2
	}
	return float64(m) / float64(time.Millisecond)
}

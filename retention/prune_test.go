package retention

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/internal/rig/storetest"
	"github.com/ingestworks/ingest/ledger"
	"github.com/ingestworks/ingest/store"
)

// TestPruneKeepsWhatIsRecent stores a month of daily runs, stats and
// ledger rows, prunes everything older than ten days, and checks what is
// left: the recent runs whole, a run in flight, the backfill's results, the
// ledger inside its window; and that the file shrank.
func TestPruneKeepsWhatIsRecent(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		start := t0.Add(-30 * 24 * time.Hour)
		for d := 0; d < 30; d++ {
			at := start.Add(time.Duration(d) * 24 * time.Hour)
			var videos []ingest.Video
			for i := 0; i < 40; i++ {
				v := vid(fmt.Sprintf("d%02dv%02d", d, i), "a title long enough to take some room "+fmt.Sprint(d, i))
				v.Description = string(make([]byte, 2000))
				videos = append(videos, v)
			}
			id := run(t, db, ingest.Trending, "US", at, page(ingest.Trending, "US", 1, at, videos...))
			if err := db.FinishRun(ctx, id, ingest.RunEnd{Status: ingest.StatusCompleted, At: at}); err != nil {
				t.Fatal(err)
			}
			if err := db.SaveStats(ctx, []ingest.VideoStats{{ID: videos[0].ID, ViewCount: 5, At: at}}); err != nil {
				t.Fatal(err)
			}
			call := ingest.Call{QuotaKey: "k", ID: fmt.Sprint("c", d), At: at, Op: "videos.list", RunID: id,
				Charges: []ingest.Charge{{Pool: "default", Units: 1}}}
			if err := ledger.New(db).RecordCall(ctx, call); err != nil {
				t.Fatal(err)
			}
			if err := db.RecordPass(ctx, "track", at, at.Add(time.Minute), at, ingest.StatusCompleted); err != nil {
				t.Fatal(err)
			}
		}
		inFlight := run(t, db, ingest.Trending, "GB", start) // never finished: kept
		backfill := run(t, db, ingest.Search, "DE", start, page(ingest.Search, "DE", 1, start, vid("old-search", "S")))
		before, err := db.Size(ctx)
		if err != nil {
			t.Fatal(err)
		}
		cut := start.Add(20 * 24 * time.Hour).Truncate(24 * time.Hour) // a day's 00:00: statistics go in whole days
		got, err := Prune(ctx, db, Retention{Before: cut, LedgerBefore: cut.Add(-24 * time.Hour), Batch: 7})
		if err != nil {
			t.Fatal(err)
		}
		if got.Runs != 20 || got.Entries != 20*40 || got.Stats != 20 || got.Videos != 20*40 || got.Ledger != 19 {
			t.Errorf("pruned %+v, want 20 runs, 800 entries, 20 stats, 800 videos, 19 ledger rows", got)
		}
		for _, c := range []struct {
			q    string
			want int
		}{
			{`SELECT count(*) FROM runs WHERE kind = 'trending' AND status <> 'running'`, 10},
			{`SELECT count(*) FROM trending_entries`, 400},
			{`SELECT count(*) FROM video_stats`, 10},
			{`SELECT count(*) FROM ledger`, 11},
			{`SELECT count(*) FROM passes`, 10},
			{fmt.Sprintf(`SELECT count(*) FROM runs WHERE id IN (%d, %d)`, inFlight, backfill), 2},
			{`SELECT count(*) FROM videos WHERE id = 'old-search'`, 1},
			{`SELECT count(*) FROM video_regions`, 401},
		} {
			if n := count(t, db, c.q); n != c.want {
				t.Errorf("%s = %d, want %d", c.q, n, c.want)
			}
		}
		integrityCheck(t, db)
		after, err := db.Size(ctx)
		if err != nil {
			t.Fatal(err)
		}
		// A file that shrinks is SQLite's; PostgreSQL's autovacuum reuses
		// the space instead.
		if fi, _ := os.Stat(db.Path()); !db.Postgres() && (after.Bytes >= before.Bytes || got.Freed == 0 || fi.Size() > after.Bytes) {
			t.Errorf("size %d bytes before, %d after (freed %d, file %d): want the file to shrink", before.Bytes, after.Bytes, got.Freed, fi.Size())
		}
		if !after.OldestRun.Equal(start) {
			t.Errorf("oldest run %s, want %s (the run in flight is kept)", after.OldestRun, start)
		}
	})
}

// TestPruneBoundsWAL prunes several megabytes in small batches and checks
// that the WAL never held more than about one batch, that it is empty
// afterwards, and that exactly the old runs, their entries and their
// videos went.
func TestPruneBoundsWAL(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := openTest(t) // the WAL: SQLite only
	pr := small(db)
	start := t0.Add(-30 * 24 * time.Hour)
	for d := 0; d < 30; d++ {
		at := start.Add(time.Duration(d) * 24 * time.Hour)
		var videos []ingest.Video
		for i := 0; i < 40; i++ {
			v := vid(fmt.Sprintf("d%02dv%02d", d, i), fmt.Sprint("a title ", d, i))
			v.Description = strings.Repeat(fmt.Sprint("words of day ", d, " video ", i, " "), 300)
			videos = append(videos, v)
		}
		id := run(t, db, ingest.Trending, "US", at, page(ingest.Trending, "US", 1, at, videos...))
		if err := db.FinishRun(ctx, id, ingest.RunEnd{Status: ingest.StatusCompleted, At: at}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := db.Writer().Exec(`PRAGMA wal_checkpoint(TRUNCATE)`); err != nil {
		t.Fatal(err)
	}
	pragmas := func() (cache, temp, auto int, err error) {
		err = db.Writer().QueryRow(`SELECT (SELECT cache_size FROM pragma_cache_size), (SELECT temp_store FROM pragma_temp_store)`).
			Scan(&cache, &temp)
		if err == nil {
			err = db.Writer().QueryRow(`PRAGMA wal_autocheckpoint`).Scan(&auto)
		}
		return cache, temp, auto, err
	}
	cache0, temp0, auto0, err := pragmas()
	if err != nil {
		t.Fatal(err)
	}
	const bound = 1 << 20
	var peak int64
	pr.beforeCheckpoint = func() { peak = max(peak, walSize(t, db)) }
	got, err := pr.prune(ctx, Retention{Before: start.Add(20 * 24 * time.Hour).Truncate(24 * time.Hour), Batch: 40})
	if err != nil {
		t.Fatal(err)
	}
	if got.Freed < 4*bound {
		t.Fatalf("freed %d bytes: too little to check a bound of %d", got.Freed, bound)
	}
	if peak > bound {
		t.Errorf("WAL peaked at %d bytes while pruning, want at most %d", peak, bound)
	}
	if n := walSize(t, db); n != 0 {
		t.Errorf("WAL holds %d bytes after pruning, want 0", n)
	}
	if auto0 != store.WALCheckpointAt/4096 {
		t.Errorf("writer before pruning: wal_autocheckpoint %d, want %d", auto0, store.WALCheckpointAt/4096)
	}
	if cache, temp, auto, err := pragmas(); err != nil || cache != cache0 || temp != temp0 || auto != auto0 {
		t.Errorf("writer after pruning: cache_size %d, temp_store %d, wal_autocheckpoint %d (%v); want what it had back: %d, %d and %d",
			cache, temp, auto, err, cache0, temp0, auto0)
	}
	if got.Runs != 20 || got.Entries != 800 || got.Videos != 800 {
		t.Errorf("pruned %+v, want 20 runs, 800 entries, 800 videos", got)
	}
	want := map[string]int{`SELECT count(*) FROM trending_entries`: 400, `SELECT count(*) FROM videos`: 400,
		`SELECT count(*) FROM videos WHERE id < 'd20'`: 0, `SELECT count(*) FROM runs`: 10,
		`SELECT count(*) FROM video_days WHERE region <> ''`: 400}
	for q, n := range want {
		if c := count(t, db, q); c != n {
			t.Errorf("%s = %d, want %d", q, c, n)
		}
	}
	integrityCheck(t, db)
}

func walSize(t *testing.T, db *store.DB) int64 {
	t.Helper()
	fi, err := os.Stat(db.Path() + "-wal")
	if errors.Is(err, os.ErrNotExist) {
		return 0
	}
	if err != nil {
		t.Fatal(err)
	}
	return fi.Size()
}

// TestPruneBesideADaemon prunes while another handle on the file (a
// daemon) keeps saving pages, and checks that every one of its pages was
// stored and is still there after the prune, as a fresh open reads it:
// pruning must work in the shared file, never around it.
func TestPruneBesideADaemon(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := openTest(t)
	pr := small(db)
	start := t0.Add(-30 * 24 * time.Hour)
	for d := range 30 {
		at := start.Add(time.Duration(d) * 24 * time.Hour)
		var videos []ingest.Video
		for i := range 40 {
			v := vid(fmt.Sprintf("d%02dv%02d", d, i), fmt.Sprint("a title ", d, i))
			v.Description = strings.Repeat(fmt.Sprint("words of day ", d, " video ", i, " "), 100)
			videos = append(videos, v)
		}
		id := run(t, db, ingest.Trending, "US", at, page(ingest.Trending, "US", 1, at, videos...))
		if err := db.FinishRun(ctx, id, ingest.RunEnd{Status: ingest.StatusCompleted, At: at}); err != nil {
			t.Fatal(err)
		}
	}
	daemon, err := store.Open(ctx, db.Path())
	if err != nil {
		t.Fatal(err)
	}
	defer daemon.Close()
	done, saved := make(chan struct{}), make(chan int)
	busy := 0 // the daemon's writes that outwaited busy_timeout
	go func() {
		n := 0
		for ; ; n++ {
			select {
			case <-done:
				saved <- n
				return
			default:
			}
			at := t0.Add(time.Duration(n) * time.Minute)
			var id int64
			err := untilFree(&busy, func() (err error) {
				id, err = daemon.StartRun(ctx, "GB", "", ingest.Trending, at)
				return err
			})
			if err == nil {
				err = untilFree(&busy, func() error {
					return daemon.SavePage(ctx, id, page(ingest.Trending, "GB", 1, at, vid(fmt.Sprint("live", n), "live")))
				})
			}
			if err != nil {
				t.Errorf("the daemon's page %d: %v", n, err)
				saved <- n
				return
			}
			// A daemon stores a page now and then; one that never let go
			// of the write lock would starve any other writer, prune or not.
			time.Sleep(5 * time.Millisecond)
		}
	}()
	_, err = pr.prune(ctx, Retention{Before: start.Add(20 * 24 * time.Hour), Batch: 40})
	close(done)
	n := <-saved
	if err != nil {
		t.Fatal(err)
	}
	fresh, err := store.OpenExisting(ctx, db.Path())
	if err != nil {
		t.Fatal(err)
	}
	defer fresh.Close()
	var got int
	if err := fresh.Reader().QueryRow(`SELECT count(*) FROM trending_entries WHERE region = 'GB'`).Scan(&got); err != nil {
		t.Fatal(err)
	}
	if n == 0 || got != n {
		t.Errorf("the daemon saved %d pages while pruning; %d are in the file after", n, got)
	}
	if busy > 0 {
		t.Logf("the daemon's writes waited past busy_timeout %d times and were tried again", busy)
	}
}

// untilFree runs write again while SQLite says the file is locked (a
// writer on a loaded machine can wait past busy_timeout), at most five
// times, counting each in busy.
func untilFree(busy *int, write func() error) error {
	err := write()
	for try := 0; err != nil && strings.Contains(err.Error(), "SQLITE_BUSY") && try < 5; try++ {
		*busy++
		err = write()
	}
	return err
}

// TestPruneTellsItsProgress: a prune of many transactions tells what it has
// removed so far after each, counts that only grow, the last what it
// returns.
func TestPruneTellsItsProgress(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		start := t0.Add(-30 * 24 * time.Hour)
		for d := 0; d < 6; d++ {
			var videos []ingest.Video
			for i := 0; i < 5; i++ {
				videos = append(videos, vid(fmt.Sprintf("p%dv%d", d, i), "title"))
			}
			finished(t, db, "US", start.Add(time.Duration(d)*time.Hour), videos...)
		}
		var told []ingest.Pruned
		got, err := Prune(ctx, db, Retention{Before: t0, Batch: 5, Progress: func(p ingest.Pruned) { told = append(told, p) }})
		if err != nil {
			t.Fatal(err)
		}
		if got.Runs != 6 {
			t.Fatalf("pruned %+v, want 6 runs", got)
		}
		if len(told) < 6 || told[0].Runs == 0 || told[0].Runs >= got.Runs {
			t.Fatalf("told %+v of %+v: want a count after each run's transaction", told, got)
		}
		for i := 1; i < len(told); i++ {
			if told[i].Runs < told[i-1].Runs || told[i].Entries < told[i-1].Entries || told[i].Videos < told[i-1].Videos {
				t.Fatalf("told %+v then %+v: a count went back", told[i-1], told[i])
			}
		}
		if last := told[len(told)-1]; last.Runs != got.Runs || last.Entries != got.Entries || last.Videos != got.Videos {
			t.Errorf("last told %+v, pruned %+v", last, got)
		}
	})
}

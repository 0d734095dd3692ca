package dbcopy

import (
	"context"
	"errors"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/internal/rig/pgtest"
	"github.com/ingestworks/ingest/internal/rig/storetest"
	"github.com/ingestworks/ingest/store"
)

// Every table the migrations of either database build is copied, or is
// named with why it is not: a new table is a decision, not a table left
// behind.
func TestCopyCarriesEveryTable(t *testing.T) {
	t.Parallel()
	carriedNames := map[string]bool{}
	for _, c := range copyTables {
		carriedNames[c.name] = true
	}
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		have := map[string]bool{}
		for _, name := range tablesOf(t, db) {
			have[name] = true
			if !carriedNames[name] && notCopied[name] == "" {
				t.Errorf("table %s is neither copied by db copy (copyTables) nor named in notCopied", name)
			}
		}
		for name := range carriedNames {
			if !have[name] {
				t.Errorf("db copy carries %s, which this database does not have", name)
			}
		}
	})
}

// fillEveryTable writes at least one row into every table db copy
// carries, through the store where it has a writer and by hand where its
// writers live elsewhere (the limiter's tables, the API's tokens).
func fillEveryTable(t *testing.T, db *store.DB) {
	t.Helper()
	ctx := context.Background()
	v1, v2 := vid("a1", "Müller Fußball ß"), vid("a2", "हिन्दी गाना")
	v2.LikeCount, v2.CommentCount = nil, nil
	for i := range 3 {
		at := t0.Add(time.Duration(i) * time.Hour)
		run(t, db, ingest.Trending, "US", at, v1, v2, vid("b"+string(rune('0'+i)), "song"))
	}
	run(t, db, ingest.Trending, "DE", t0, v1)
	run(t, db, ingest.Search, "GB", t0, v2)
	ms := t0.UnixMilli()
	for _, q := range []struct {
		sql  string
		args []any
	}{
		{`INSERT INTO video_stats (vid, at_ms, view_count, like_count, comment_count, day_ms) SELECT vid, ?1, 5, NULL, 2, CAST(?1 AS bigint) / 86400000 * 86400000 FROM videos`, []any{ms}},
		{`INSERT INTO videos_gone (id, gone_ms) VALUES ('gone1', ?)`, []any{ms}},
		{`INSERT INTO categories (region, id, title, fetched_ms) VALUES ('US', '10', 'Music', ?)`, []any{ms}},
		{`INSERT INTO category_fetches (region, fetched_ms) VALUES ('US', ?)`, []any{ms}},
		{`INSERT INTO region_catalogue (code, name, fetched_ms) VALUES ('US', 'United States', ?), ('TR', 'Türkiye', ?)`, []any{ms, ms}},
		{`INSERT INTO backfill_cursors (key, region, since, updated_ms) VALUES ('k1', 'US', '2026-01-01T00:00:00Z', ?)`, []any{ms}},
		{`INSERT INTO schedule (id, every_ms, regions, updated_ms) VALUES (1, 3600000, 'US,DE', ?)`, []any{ms}},
		{`INSERT INTO api_tokens (name, hash, plan, created_ms, last_used_ms) VALUES ('ci', 'ab12', 'default', ?, NULL)`, []any{ms}},
		{`INSERT INTO pace_plans (quota_key, written_ms, plan) VALUES ('Qk', ?, '{"a":1}'), ('qk', ?, '{}')`, []any{ms, ms}},
		{`INSERT INTO passes (entry, started_ms, finished_ms, slot_ms, status) VALUES ('track', ?, ?, ?, 'completed'), ('prune', ?, ?, NULL, 'failed')`, []any{ms, ms + 9, ms - 9, ms, ms + 1}},
		{`INSERT INTO ledger (quota_key, call_id, pool, units, at_ms, op, region, run_id, unmetered, seq) VALUES
		  ('qk', 'c1', 'default', 1, ?, 'videos.list', 'US', 1, 0, 1), ('qk', 'c2', 'default', 3, ?, 'videos.list', '', NULL, 1, 2)`, []any{ms, ms}},
		{`INSERT INTO ledger_blocks (quota_key, pool, until_ms, at_ms, op) VALUES ('qk', 'default', ?, ?, 'videos.list')`, []any{ms + 1, ms}},
		{`INSERT INTO ledger_given_back (quota_key, call_id, at_ms, seq) VALUES ('qk', 'c1', ?, 3)`, []any{ms}},
		{`INSERT INTO ledger_seq (quota_key, last) VALUES ('qk', 3)`, nil},
		{`INSERT INTO ledger_unknown (quota_key, instance, token, op, at_ms, charges) VALUES ('qk', 'i1', 7, 'videos.list', ?, 'default=1')`, []any{ms}},
		{`INSERT INTO ledger_notes (name, value) VALUES ('terms_kept_ms', '1')`, nil},
		{`INSERT INTO quota_log (quota_key, pool, id, at_ms, units) VALUES ('qk', 'default', 'c1', ?, 30)`, []any{ms}},
		{`INSERT INTO quota_block (quota_key, pool, until_ms) VALUES ('qk', 'default', ?)`, []any{ms}},
		{`INSERT INTO quota_clock (quota_key, last_ms, seq) VALUES ('qk', ?, 4)`, []any{ms}},
		{`INSERT INTO quota_config (quota_key, pool, conf) VALUES ('qk', 'default', '40:0:86400000:')`, nil},
	} {
		if _, err := db.Writer().ExecContext(ctx, q.sql, q.args...); err != nil {
			t.Fatalf("%s: %v", q.sql, err)
		}
	}
	for _, c := range copyTables {
		if n := count(t, db, `SELECT count(*) FROM `+c.name); n == 0 {
			t.Fatalf("the source has no row in %s: fill it, or the copy's sums prove nothing of it", c.name)
		}
	}
}

func copyAll(t *testing.T, src, dst *store.DB) []TableSums {
	t.Helper()
	sums, err := Copy(context.Background(), src, dst, nil)
	if err != nil {
		t.Fatalf("copy %s into %s: %v", src.Path(), dst.Path(), err)
	}
	for _, s := range sums {
		if !s.Same() {
			t.Errorf("copy %s into %s: %s: source %+v, target %+v", src.Path(), dst.Path(), s.Table, s.Source, s.Target)
		}
	}
	return sums
}

// A SQLite file copied into PostgreSQL, and that back into SQLite, keeps
// every row of every table, its search and its rollup, and the targets
// take new pages after it.
func TestCopyBothWays(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	src := open(t, filepath.Join(t.TempDir(), "src.db"))
	fillEveryTable(t, src)
	pg := open(t, pgtest.URL(t))
	back := open(t, filepath.Join(t.TempDir(), "back.db"))
	first := copyAll(t, src, pg)
	second := copyAll(t, pg, back)
	for i := range first {
		if first[i].Source != second[i].Target {
			t.Errorf("%s: the SQLite source sums %+v, its copy back from PostgreSQL %+v", first[i].Table, first[i].Source, second[i].Target)
		}
	}
	for _, db := range []*store.DB{src, pg, back} {
		integrityCheck(t, db)
		for _, q := range []string{"fussball", "muller", "हिन्दी", "song"} {
			hits, err := db.Search(ctx, q, store.SearchOptions{Limit: 10})
			if err != nil || len(hits) == 0 {
				t.Errorf("%s: search %q: %d hits, %v; want some", db.Path(), q, len(hits), err)
			}
		}
		before := count(t, db, `SELECT count(*) FROM video_days`)
		run(t, db, ingest.Trending, "FR", t0.Add(48*time.Hour), vid("new", "new one"))
		if after := count(t, db, `SELECT count(*) FROM video_days`); after != before+1 {
			t.Errorf("%s: a new page after the copy made %d daily rows, want 1: the rollup's triggers are not back", db.Path(), after-before)
		}
	}
}

// A copy stopped halfway goes on where it stopped, and ends whole, with
// no row twice.
func TestCopyResumesAfterAStop(t *testing.T) {
	for _, to := range []string{"sqlite", "postgres"} {
		t.Run(to, func(t *testing.T) {
			src := open(t, filepath.Join(t.TempDir(), "src.db"))
			fillEveryTable(t, src)
			dstURL := filepath.Join(t.TempDir(), "dst.db")
			if to == "postgres" {
				dstURL = pgtest.URL(t)
			}
			dst := open(t, dstURL)
			old := copyBatch
			copyBatch = 2
			t.Cleanup(func() { copyBatch = old })
			ctx, cancel := context.WithCancel(context.Background())
			var stoppedAt int64
			_, err := Copy(ctx, src, dst, func(done, total int64) {
				if done >= total/2 && stoppedAt == 0 {
					stoppedAt = done
					cancel()
				}
			})
			if !errors.Is(err, context.Canceled) {
				t.Fatalf("the stopped copy: %v, want it canceled", err)
			}
			if got := count(t, dst, `SELECT count(*) FROM runs`); got == 0 {
				t.Fatalf("the stopped copy left no run on the target: it stopped before it began")
			}
			copyAll(t, src, dst)
			integrityCheck(t, dst)
		})
	}
}

// A target holding anything, or part of a copy of another database, is
// refused before anything is written to it.
func TestCopyRefusesATargetWithData(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	src := open(t, filepath.Join(t.TempDir(), "src.db"))
	fillEveryTable(t, src)
	other := open(t, filepath.Join(t.TempDir(), "other.db"))
	fillEveryTable(t, other)
	used := open(t, filepath.Join(t.TempDir(), "used.db"))
	run(t, used, ingest.Trending, "US", t0, vid("u", "used"))
	halfway := open(t, filepath.Join(t.TempDir(), "halfway.db"))
	if _, err := halfway.Writer().Exec(`INSERT INTO ledger_notes (name, value) VALUES (?, 'ledger 0123 at elsewhere')`, copyFromNote); err != nil {
		t.Fatal(err)
	}
	for _, dst := range []*store.DB{used, halfway} {
		before := count(t, dst, `SELECT count(*) FROM ledger_notes`)
		_, err := Copy(ctx, src, dst, nil)
		var te *TargetError
		if !errors.As(err, &te) {
			t.Errorf("copy into %s: %v, want a TargetError", dst.Path(), err)
		}
		if after := count(t, dst, `SELECT count(*) FROM ledger_notes`); after != before {
			t.Errorf("copy into %s wrote to it before refusing it", dst.Path())
		}
	}
	_ = other
}

// A snapshot of a SQLite file taken while a worker writes pages to it is
// one consistent state: its copy agrees with it table by table, and holds
// no page in part.
func TestCopyOfALiveFile(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	srcPath := filepath.Join(dir, "src.db")
	src := open(t, srcPath)
	fillEveryTable(t, src)
	stop, started, wrote := make(chan struct{}), make(chan struct{}), make(chan int)
	go func() {
		n := 0
		defer func() { wrote <- n }()
		for {
			select {
			case <-stop:
				return
			default:
			}
			at := t0.Add(time.Duration(n) * time.Minute)
			id, err := src.StartRun(ctx, "JP", "", ingest.Trending, at)
			if err != nil {
				t.Error(err)
				return
			}
			p := ingest.Page{Kind: ingest.Trending, Region: "JP", Number: 1, Fetched: at,
				Videos: []ingest.Video{vid("live"+strconv.Itoa(n), "live one"), vid("live", "always there")}}
			if err := src.SavePage(ctx, id, p); err != nil {
				t.Error(err)
				return
			}
			if n++; n == 3 {
				close(started)
			}
		}
	}()
	select {
	case <-started:
	case n := <-wrote:
		t.Fatalf("the worker stopped after %d runs", n)
	}
	snapPath := filepath.Join(dir, "snap.db")
	err := store.Snapshot(ctx, srcPath, snapPath)
	close(stop)
	n := <-wrote
	if err != nil {
		t.Fatalf("snapshot of a file being written: %v", err)
	}
	snap := open(t, snapPath)
	dst := open(t, filepath.Join(dir, "dst.db"))
	copyAll(t, snap, dst)
	runs := count(t, dst, `SELECT count(*) FROM runs WHERE region = 'JP'`)
	entries := count(t, dst, `SELECT count(*) FROM trending_entries WHERE region = 'JP'`)
	if runs == 0 || runs > n || entries != 2*runs && entries != 2*runs-2 {
		t.Errorf("the copy of a live file holds %d runs with %d entries (the worker wrote %d runs of 2): a page in part", runs, entries, n)
	}
}

package store

import (
	"context"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/internal/rig/pgtest"
	"github.com/ingestworks/ingest/ledger"
)

// TestCopyToPG fills a SQLite store and a PostgreSQL one with the same
// work, copies the SQLite one into a second PostgreSQL store, and checks
// the copy against the store PostgreSQL filled itself: the same rows in
// every table, the same rollup, an index that holds each video's text, the
// same search hits, and a store that takes new pages after the copy.
func TestCopyToPG(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "ingest.db")
	lite, native := openURL(t, path), openURL(t, pgtest.URL(t))
	for _, db := range []*DB{lite, native} {
		fillForCopy(t, db)
	}
	lite.Close()
	url := pgtest.URL(t)
	copied, counts, _, err := loadPG(ctx, path, url)
	if err != nil {
		t.Fatal(err)
	}
	defer copied.Close()
	for _, table := range pgTables() {
		var want, got int64
		if err := native.Reader().QueryRow(`SELECT count(*) FROM ` + table).Scan(&want); err != nil {
			t.Fatal(err)
		}
		if err := copied.Reader().QueryRow(`SELECT count(*) FROM ` + table).Scan(&got); err != nil {
			t.Fatal(err)
		}
		if got != want || (table != "ledger_notes" && counts[table] != want) {
			t.Errorf("%s: %d rows copied, %d rows after the copy, want %d", table, counts[table], got, want)
		}
	}
	rollup := `SELECT string_agg(concat_ws(',', v.id, d.region, d.category, d.day_ms, d.first_ms, d.last_ms, d.entries,
		d.best_rank, d.last_rank, d.peak_ms, d.views, d.likes, d.comments), ';' ORDER BY v.id, d.region, d.category, d.day_ms)
		FROM video_days AS d JOIN videos AS v USING (vid)`
	var want, got string
	if err := native.Reader().QueryRow(rollup).Scan(&want); err != nil {
		t.Fatal(err)
	}
	if err := copied.Reader().QueryRow(rollup).Scan(&got); err != nil {
		t.Fatal(err)
	}
	if got != want {
		t.Errorf("rollup after the copy:\n%s\nwant\n%s", got, want)
	}
	integrityCheck(t, copied)
	c := newCorpus(7)
	for _, q := range []string{c.words[2], c.words[40], c.words[2] + " " + c.words[3], c.words[5] + "*"} {
		for _, region := range []string{"", "GB"} {
			if got, want := hitIDs(t, copied, q, region), hitIDs(t, native, q, region); !slices.Equal(got, want) {
				t.Errorf("search %q in %q: %v after the copy, want %v", q, region, got, want)
			}
		}
	}
	run(t, copied, ingest.Trending, "US", t0.Add(72*time.Hour), c.page(ingest.Trending, 1))
}

// fillForCopy writes runs of two regions over two days, tracked counts and
// a ledger call.
func fillForCopy(t *testing.T, db *DB) {
	ctx := context.Background()
	c := newCorpus(7)
	pages := []ingest.Page{c.page(ingest.Trending, 1), c.page(ingest.Trending, 2)}
	for h := range 30 {
		at := t0.Add(time.Duration(h) * 2 * time.Hour)
		for _, region := range []string{"US", "GB"} {
			id := run(t, db, ingest.Trending, region, at)
			for _, p := range pages {
				p.Region, p.Fetched = region, at
				vs := slices.Clone(p.Videos)
				for i := range vs {
					views := *vs[i].ViewCount + int64(h*i)
					vs[i].ViewCount = &views
				}
				p.Videos = vs
				if h%3 == 0 {
					slices.Reverse(p.Videos)
				}
				if err := db.SavePage(ctx, id, p); err != nil {
					t.Fatal(err)
				}
			}
			if err := db.FinishRun(ctx, id, ingest.RunEnd{Status: ingest.StatusCompleted, At: at.Add(time.Minute)}); err != nil {
				t.Fatal(err)
			}
		}
	}
	var stats []ingest.VideoStats
	for h := range 40 {
		stats = append(stats, ingest.VideoStats{ID: pages[0].Videos[h%5].ID, At: t0.Add(time.Duration(h) * 97 * time.Minute),
			ViewCount: int64(1000 + h), LikeCount: i64(int64(h))})
	}
	if err := db.SaveStats(ctx, stats); err != nil {
		t.Fatal(err)
	}
	if err := ledger.New(db).RecordCall(ctx, ingest.Call{QuotaKey: "k", ID: "c1", At: t0, Op: "videos.list", Charges: []ingest.Charge{{Pool: "default", Units: 1}}}); err != nil {
		t.Fatal(err)
	}
}

func hitIDs(t *testing.T, db *DB, q, region string) []string {
	t.Helper()
	hits, err := db.Search(context.Background(), q, SearchOptions{Region: region, Limit: 1000})
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, h := range hits {
		ids = append(ids, h.ID)
	}
	slices.Sort(ids)
	return ids
}

package dbcopy

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"testing"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/internal/rig/pgtest"
	"github.com/ingestworks/ingest/store"
)

// Installing the tracking beside a worker that stores pages (its videos,
// then its run: another order than the tables' own) never meets it in a
// deadlock on either database: each install is whole or absent, and a
// refusal is tried again and said.
func TestTrackBesideAWriterNeverDeadlocks(t *testing.T) {
	for _, on := range []string{"sqlite", "postgres"} {
		t.Run(on, func(t *testing.T) {
			t.Parallel()
			url := filepath.Join(t.TempDir(), "src.db")
			if on == "postgres" {
				url = pgtest.URL(t)
			}
			db, worker := open(t, url), open(t, url)
			ctx := t.Context()
			var mu sync.Mutex
			var saveErr error
			failed := func(err error) {
				mu.Lock()
				defer mu.Unlock()
				saveErr = err
			}
			videos := make([]ingest.Video, 50)
			for i := range videos {
				videos[i] = vid(fmt.Sprintf("v%02d", i), "a song")
			}
			// Each install and removal runs beside the worker's writes
			// begun just before it: a run of pages, and decisions of the
			// embedded limiter (its clock row read first, then its log and
			// the ledger written). They stop when it returns, or after a
			// run: SQLite hands its write lock to no one in turn, so
			// writes without end would keep the install waiting as long
			// as chance wants, the worker writing all along.
			decisions := 0
			beside := func(install func() error) error {
				done := make(chan struct{})
				over := func() bool {
					select {
					case <-done:
						return true
					default:
						return false
					}
				}
				var wg sync.WaitGroup
				wg.Add(2)
				go func() {
					defer wg.Done()
					id, err := worker.StartRun(ctx, "US", "", ingest.Trending, t0)
					for n := 1; err == nil && n <= 4 && !over(); n++ {
						err = worker.SavePage(ctx, id, ingest.Page{Kind: ingest.Trending, Region: "US", Number: n, Videos: videos, Fetched: t0})
					}
					if err != nil {
						failed(err)
					}
				}()
				go func() {
					defer wg.Done()
					for k := 0; k < 5 && !over(); k++ {
						if err := decide(ctx, worker, decisions); err != nil {
							failed(err)
							return
						}
						decisions++
					}
				}()
				err := install()
				close(done)
				wg.Wait()
				return err
			}
			retried := 0
			for i := 0; i < 40; i++ {
				if err := beside(func() error { return Track(ctx, db, func(error) { retried++ }) }); err != nil {
					t.Errorf("install %d beside the worker: %v", i, err)
					break
				}
				if tracked, err := Tracked(ctx, db); err != nil || !tracked {
					t.Fatalf("install %d: tracked %v, %v", i, tracked, err)
				}
				if on == "postgres" {
					if n := count(t, db, `SELECT count(*) FROM pg_trigger WHERE tgname LIKE 'copy_track_%'`); n != len(copyTables) {
						t.Fatalf("install %d: %d tables tracked of %d", i, n, len(copyTables))
					}
				}
				if err := beside(func() error { return Untrack(ctx, db, func(error) { retried++ }) }); err != nil {
					t.Errorf("removal %d beside the worker: %v", i, err)
					break
				}
			}
			if saveErr != nil {
				t.Errorf("the worker's writes beside the installs: %v", saveErr)
			}
			t.Logf("%d refusals tried again", retried)
		})
	}
}

// decide writes as a decision of the embedded limiter does, in one
// transaction: the clock row read, the window's log and the ledger
// written, the clock row set.
func decide(ctx context.Context, db *store.DB, n int) error {
	tx, err := db.Writer().BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	id := fmt.Sprintf("call-%d", n)
	for _, q := range []string{
		`SELECT count(*) FROM quota_clock WHERE quota_key = 'k'`,
		`INSERT INTO quota_log (quota_key, pool, id, at_ms, units) VALUES ('k', 'default', '` + id + `', 1, 1)`,
		`INSERT INTO ledger (quota_key, call_id, pool, units, at_ms, op) VALUES ('k', '` + id + `', 'default', 1, 1, 'videos.list')`,
		`INSERT INTO quota_clock (quota_key, last_ms, seq) VALUES ('k', 1, 1) ON CONFLICT (quota_key) DO UPDATE SET seq = quota_clock.seq + 1`,
	} {
		if _, err := tx.ExecContext(ctx, q); err != nil {
			return err
		}
	}
	return tx.Commit()
}

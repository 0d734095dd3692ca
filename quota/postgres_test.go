package quota_test

import (
	"context"
	"database/sql"
	"errors"
	"os"
	"sync"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/clock"
	"github.com/ingestworks/ingest/internal/rig/pgtest"
	"github.com/ingestworks/ingest/quota"
	"github.com/ingestworks/ingest/store"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Run(m)) }

// pgNow is the server's clock in Unix ms, as the limiter reads it.
const pgNow = `CAST(floor(extract(epoch FROM clock_timestamp()) * 1000) AS BIGINT)`

// openStore opens the store at url as a process does (migrating it when it
// is new) and returns its pool, which the limiter is given in production.
func openStore(t testing.TB, url string) *sql.DB {
	t.Helper()
	db, err := store.Open(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db.Writer()
}

// rawPG is a plain pgx pool on url, for what the tests themselves read and
// write.
func rawPG(t testing.TB, url string) *sql.DB {
	t.Helper()
	db, err := sql.Open("pgx", url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// pgLimiter opens the limiter on a store of its own on url: a process of
// its own.
func pgLimiter(t testing.TB, url string, o limOpts) *quota.Postgres {
	t.Helper()
	if o.Logger == nil {
		o.Logger = quiet
	}
	l, err := newPostgres(openStore(t, url), o)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// pgHarness keeps one database per quota key (leases are named without
// one, as on SQLite), each limiter on its own store like a process of its
// own; at moves the server's clock with ClockOffset, as Redis's does.
func pgHarness() harness { return pgHarnessBy(noDrift) }

// pgHarnessBy is pgHarness on PostgreSQL's clock moved by drift.
func pgHarnessBy(drift drift) harness {
	var mu sync.Mutex
	urls := map[string]string{}
	url := func(t *testing.T, key string) string {
		mu.Lock()
		defer mu.Unlock()
		if urls[key] == "" {
			urls[key] = pgtest.URL(t)
			openStore(t, urls[key]) // the schema, once
		}
		return urls[key]
	}
	as := func(t *testing.T, key string, costs *ingest.Costs, offset time.Duration, ledger string) limiter {
		moved := drift(t)
		return pgLimiter(t, url(t, key), limOpts{QuotaKey: key, Costs: costs, Timeout: hangFree, ClockOffset: offset, Drift: moved, Ledger: ledger,
			Clock: clock.Func(func() time.Time { return time.Now().Add(offset + moved()) })})
	}
	at := func(t *testing.T, key string, costs *ingest.Costs, offset time.Duration) limiter {
		return as(t, key, costs, offset, "")
	}
	return harness{
		at: at,
		as: func(t *testing.T, key string, costs *ingest.Costs, ledger string) limiter {
			return as(t, key, costs, 0, ledger)
		},
		open: func(t *testing.T, key string, costs *ingest.Costs) limiter { return at(t, key, costs, 0) },
		plant: func(t *testing.T, key, name, token string, ttl time.Duration) {
			_, err := rawPG(t, url(t, key)).Exec(`INSERT INTO locks (name, token, expires_ms) VALUES ($1, $2, `+pgNow+` + $3)
				ON CONFLICT (name) DO UPDATE SET token = excluded.token, expires_ms = excluded.expires_ms`,
				name, token, ttl.Milliseconds())
			if err != nil {
				t.Fatal(err)
			}
		},
		holder: func(t *testing.T, key, name string) string {
			var tok string
			err := rawPG(t, url(t, key)).QueryRow(`SELECT token FROM locks WHERE name = $1`, name).Scan(&tok)
			if err != nil && !errors.Is(err, sql.ErrNoRows) {
				t.Fatal(err)
			}
			return tok
		},
		now: func(t *testing.T) time.Time { return pgTime(t, pgClock(t)).Add(drift(t)()) },
	}
}

// pgClock is one pool on the cluster's admin database, shared by every
// test that reads the server's clock, open until the process ends.
var pgClock = func() func(t testing.TB) *sql.DB {
	var once sync.Once
	var db *sql.DB
	return func(t testing.TB) *sql.DB {
		once.Do(func() {
			var err error
			if db, err = sql.Open("pgx", pgtest.AdminURL(t)); err != nil {
				t.Fatal(err)
			}
		})
		return db
	}
}()

// pgTime reads the server's clock, which the embedded limiter decides by.
func pgTime(t testing.TB, db *sql.DB) time.Time {
	t.Helper()
	var ms int64
	if err := db.QueryRow(`SELECT ` + pgNow).Scan(&ms); err != nil {
		t.Fatal(err)
	}
	return time.UnixMilli(ms)
}

// TestPostgresLedgerIsTheFloor: ledgerFloor on PostgreSQL, by the server's
// clock.
func TestPostgresLedgerIsTheFloor(t *testing.T) {
	t.Parallel()
	url := pgtest.URL(t)
	db := rawPG(t, url)
	openStore(t, url)
	open := func(bool) limiter { return pgLimiter(t, url, limOpts{QuotaKey: "floor", Costs: floorCosts(t)}) }
	exec := func(q string, args ...any) {
		t.Helper()
		if _, err := db.Exec(q, args...); err != nil {
			t.Fatal(err)
		}
	}
	ledgerFloor(t, exec, open, func() time.Time { return pgTime(t, db) })
}

func TestPostgresConformance(t *testing.T) {
	runConformance(t, driven(pgHarnessBy))
}

func TestFaultMixedWindowsPostgres(t *testing.T) {
	t.Parallel()
	testMixedWindows(t, pgHarness())
}

func TestFaultClockBackPostgres(t *testing.T) {
	t.Parallel()
	testClockBack(t, pgHarness())
}

func TestFaultClockBehindThenCorrectedPostgres(t *testing.T) {
	t.Parallel()
	testClockBehindThenCorrected(t, pgHarness())
}

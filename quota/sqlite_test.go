package quota_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	_ "modernc.org/sqlite"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/clock"
	"github.com/ingestworks/ingest/internal/rig/clocktest"
	"github.com/ingestworks/ingest/quota"
	"github.com/ingestworks/ingest/store"
)

func openDB(t testing.TB, path string, readOnly bool) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlite", store.DSN(path, readOnly))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if !readOnly {
		migrate(t, db)
	}
	return db
}

// migrate brings a new database's schema up, as the store does when it opens
// one, waiting while another process does the same.
func migrate(t testing.TB, db *sql.DB) {
	t.Helper()
	var err error
	for range 100 {
		if err = store.Migrate(context.Background(), db); err == nil {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatal(err)
}

// sqliteHarness keeps one database file per quota key, each limiter on its
// own *sql.DB like a process of its own. The limiter decides by the
// worker's clock, which is each test's own, standing still until the test
// moves it: a window passes when the test says so, however busy the
// machine. The lease tests run on the host's clock, as a lease's renewals
// are the runtime's timers.
func sqliteHarness(dir string) harness {
	var clocks sync.Map // *testing.T -> *clocktest.Fake
	clockOf := func(t *testing.T) *clocktest.Fake {
		c, _ := clocks.LoadOrStore(t, clocktest.NewFake(time.Now()))
		return c.(*clocktest.Fake)
	}
	h := sqliteHarnessOn(dir, func(t *testing.T) clock.Clock { return clockOf(t) })
	h.drive = func(t *testing.T, at time.Time) { clockOf(t).AdvanceTo(at) }
	leases := sqliteHarnessOn(dir, func(*testing.T) clock.Clock { return clock.System })
	h.leases = &leases
	return h
}

// sqliteHarnessOn is sqliteHarness by the clock clockOf gives each test.
func sqliteHarnessOn(dir string, clockOf func(t *testing.T) clock.Clock) harness {
	var mu sync.Mutex
	file := func(key string) string { return filepath.Join(dir, key+".db") }
	exec := func(t *testing.T, key, q string, args ...any) *sql.DB {
		db := openDB(t, file(key), false)
		mu.Lock()
		defer mu.Unlock()
		if q != "" {
			if _, err := db.Exec(q, args...); err != nil {
				t.Fatal(err)
			}
		}
		return db
	}
	as := func(t *testing.T, key string, costs *ingest.Costs, offset time.Duration, ledger string) limiter {
		l, err := newSQLite(exec(t, key, ""), limOpts{QuotaKey: key, Costs: costs, Timeout: hangFree, Logger: quiet, Ledger: ledger,
			Clock: clock.Func(func() time.Time { return clockOf(t).Now().Add(offset) })})
		if err != nil {
			t.Fatal(err)
		}
		return l
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
			exec(t, key, `INSERT INTO locks (name, token, expires_ms) VALUES (?, ?, ?)
				ON CONFLICT (name) DO UPDATE SET token = excluded.token, expires_ms = excluded.expires_ms`,
				name, token, clockOf(t).Now().Add(ttl).UnixMilli())
		},
		holder: func(t *testing.T, key, name string) string {
			var tok string
			err := exec(t, key, "").QueryRow(`SELECT token FROM locks WHERE name = ?`, name).Scan(&tok)
			if err != nil && !errors.Is(err, sql.ErrNoRows) {
				t.Fatal(err)
			}
			return tok
		},
		now: func(t *testing.T) time.Time { return clockOf(t).Now() },
	}
}

func TestSQLiteConformance(t *testing.T) {
	runConformance(t, sqliteHarness(t.TempDir()))
}

// TestSQLiteStateReadOnly: State works on a query-only connection, so it
// writes nothing.
func TestSQLiteStateReadOnly(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "ro.db")
	costs := testCosts(t, 1000, 0, 5, 300*time.Millisecond)
	w, err := newSQLite(openDB(t, path, false), limOpts{QuotaKey: "ro", Costs: costs})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	var last ingest.Decision
	for range 3 {
		d, err := w.Take(ctx, ingest.Caller{}, "search.list")
		if err != nil {
			t.Fatal(err)
		}
		last = d
	}
	// the entries out of the window, not trimmed
	awaitClock(t, time.Now, last.At.Add(301*time.Millisecond))
	ro := openDB(t, path, true)
	r, err := newSQLite(ro, limOpts{QuotaKey: "ro", Costs: costs})
	if err != nil {
		t.Fatal(err)
	}
	s, err := r.State(ctx)
	if err != nil || s[0].Used != 0 {
		t.Fatalf("state on a query-only database: %+v, %v", s, err)
	}
	var n int
	ro.QueryRow(`SELECT count(*) FROM quota_log`).Scan(&n)
	if n != 6 {
		t.Fatalf("state changed the log: %d rows, want 6", n)
	}
	if _, err := r.Take(ctx, ingest.Caller{}, "videos.list"); err == nil {
		t.Fatal("take on a query-only database: no error, so the check above proves nothing")
	}
}

// TestSQLiteBusyNeverFailsOpen: a database locked past the timeout is an
// error for every call, cheap or dear: the embedded limiter never admits
// unmetered calls, which would break the limit between processes.
func TestSQLiteBusyNeverFailsOpen(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "busy.db")
	l, err := newSQLite(openDB(t, path, false), limOpts{QuotaKey: "busy", Costs: testCosts(t, 1000, 0, 5, time.Minute), Timeout: 200 * time.Millisecond, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	holder := openDB(t, path, false)
	tx, err := holder.Begin() // BEGIN IMMEDIATE: holds the write lock
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	ctx := context.Background()
	start := time.Now()
	d, err := l.Take(ctx, ingest.Caller{}, "videos.list")
	if !errors.Is(err, quota.ErrUnavailable) || d.Allowed || time.Since(start) > 2*time.Second {
		t.Fatalf("cheap call on a locked database: %+v, %v after %s; want ErrUnavailable", d, err, time.Since(start))
	}
	start = time.Now()
	if _, err := l.Take(ctx, ingest.Caller{}, "search.list"); !errors.Is(err, quota.ErrUnavailable) || time.Since(start) > 2*time.Second {
		t.Fatalf("dear call on a locked database: %v after %s", err, time.Since(start))
	}
	tx.Rollback()
	// After the lock no fault is checked: a limiter of its own, whose
	// timeout no loaded machine reaches, takes the next call.
	after, err := newSQLite(openDB(t, path, false), limOpts{QuotaKey: "busy", Costs: testCosts(t, 1000, 0, 5, time.Minute), Timeout: time.Minute, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	if d, err := after.Take(ctx, ingest.Caller{}, "search.list"); err != nil || !d.Allowed || d.Unmetered {
		t.Fatalf("after the lock: %+v, %v", d, err)
	}
}

// TestSQLiteWaitsItsTurnWhileTheFileMoves: the limiter's bound on SQLite
// is the file standing still, not the length of the wait for its write
// lock. Other processes take the lock turn after turn, each committing,
// for longer than the bound: the decision waits its turn and decides. The
// busy test above holds the lock and commits nothing: there the decision
// fails within about the bound.
func TestSQLiteWaitsItsTurnWhileTheFileMoves(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "queue.db")
	const bound = time.Second
	l, err := newSQLite(openDB(t, path, false), limOpts{QuotaKey: "queue", Costs: testCosts(t, 1000, 0, 5, time.Minute), Timeout: bound, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	take(t, l, "videos.list") // the file's path read, the limiter's rows in place
	others := openDB(t, path, false)
	if _, err := others.Exec(`CREATE TABLE turns (n INTEGER)`); err != nil {
		t.Fatal(err)
	}
	// The others hold the lock in turns of half the bound, one after
	// another at once, each committing a row, for three bounds.
	first := make(chan struct{})
	queued := make(chan error, 1)
	go func() {
		end := time.Now().Add(3 * bound)
		for n := 0; time.Now().Before(end); n++ {
			tx, err := others.Begin()
			if err == nil {
				if n == 0 {
					close(first)
				}
				time.Sleep(bound / 2)
				if _, err = tx.Exec(`INSERT INTO turns VALUES (?)`, n); err == nil {
					err = tx.Commit()
				}
			}
			if err != nil {
				queued <- err
				return
			}
		}
		queued <- nil
	}()
	<-first
	start := time.Now()
	d, err := l.Take(context.Background(), ingest.Caller{}, "videos.list")
	waited := time.Since(start)
	if qerr := <-queued; qerr != nil {
		t.Fatal(qerr)
	}
	var turns int
	others.QueryRow(`SELECT count(*) FROM turns`).Scan(&turns)
	t.Logf("behind %d turns of %s: the decision waited %s (bound %s): %+v, %v", turns, bound/2, waited, bound, d.Allowed, err)
	if err != nil || !d.Allowed {
		t.Fatalf("a decision behind a moving queue: %+v, %v; want admitted", d, err)
	}
}

// TestSQLiteLedgerIsTheFloor: calls the ledger in the same database holds
// and the log lacks (another limiter decided them) count in the window
// (ledgerFloor); a read before any decision writes nothing.
func TestSQLiteLedgerIsTheFloor(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "floor.db")
	db := openDB(t, path, false)
	open := func(ro bool) limiter {
		l, err := newSQLite(openDB(t, path, ro), limOpts{QuotaKey: "floor", Costs: floorCosts(t), Logger: quiet})
		if err != nil {
			t.Fatal(err)
		}
		return l
	}
	exec := func(q string, args ...any) {
		t.Helper()
		if _, err := db.Exec(q, args...); err != nil {
			t.Fatal(err)
		}
	}
	ledgerFloor(t, exec, open, time.Now)
	var logged int
	db.QueryRow(`SELECT count(*) FROM quota_log`).Scan(&logged)
	if logged != 20 {
		t.Fatalf("the log holds %d entries, want the pool's 20: those it took from the ledger and those it admitted", logged)
	}
}

func floorCosts(t testing.TB) *ingest.Costs {
	return parseCosts(t, "pools:\n  default: {limit: 20, window: 1h}\noperations:\n  videos.list: {default: 1}\n")
}

// numbered takes the floor's ledger's next write number, as every writer
// of the ledger does (ledger.Ledger.RecordCall).
const numbered = `INSERT INTO ledger_seq (quota_key, last) VALUES ('floor', 1)
	ON CONFLICT (quota_key) DO UPDATE SET last = ledger_seq.last + 1`

// ledgerFloor: with a pool of 20, the ledger holds 7 calls the log lacks,
// one given back: a read before any decision (open(true), a process that
// has not decided yet) counts 6; the first decision takes them into the
// log; 3 calls that reach the ledger after it (a process on Redis sharing
// the database) count from the next decision. exec runs SQL with $n
// placeholders.
func ledgerFloor(t *testing.T, exec func(q string, args ...any), open func(ro bool) limiter, now func() time.Time) {
	ctx := context.Background()
	seq, last := 1000, ""
	decidedElsewhere := func(n int, at time.Time) {
		t.Helper()
		for range n {
			seq++
			last = fmt.Sprintf("%d-%d", at.UnixMilli(), seq)
			exec(numbered)
			exec(`INSERT INTO ledger (quota_key, call_id, pool, units, at_ms, op, seq)
				VALUES ('floor', $1, 'default', 1, $2, 'videos.list', (SELECT last FROM ledger_seq WHERE quota_key = 'floor'))`,
				last, at.UnixMilli())
		}
	}
	decidedElsewhere(7, now().Add(-30*time.Minute))
	exec(numbered)
	exec(`INSERT INTO ledger_given_back (quota_key, call_id, at_ms, seq) VALUES ('floor', $1, 0, (SELECT last FROM ledger_seq WHERE quota_key = 'floor'))`, last)
	if s, err := open(true).State(ctx); err != nil || s[0].Used != 6 {
		t.Fatalf("state before any decision: %+v, %v; want default 6 used, the ledger's calls but the one given back", s, err)
	}
	l := open(false)
	takes := func() (n int) {
		t.Helper()
		for {
			d, err := l.Take(ctx, ingest.Caller{}, "videos.list")
			if err != nil {
				t.Fatal(err)
			}
			if !d.Allowed {
				return n
			}
			if n++; n > 20 {
				t.Fatal("more than the pool's 20 admitted")
			}
		}
	}
	for range 4 {
		if d, err := l.Take(ctx, ingest.Caller{}, "videos.list"); err != nil || !d.Allowed {
			t.Fatalf("take: %+v, %v", d, err)
		}
	}
	// Another limiter numbers its calls by a sequence of its own. Carrying
	// on from this one's would, in the millisecond of its last decision,
	// repeat that decision's id, which the log takes for a call it holds.
	seq = 5000
	decidedElsewhere(3, now())
	if got, want := takes(), 20-6-4-3; got != want {
		t.Fatalf("after 6 calls of the ledger, 4 takes and 3 more calls of the ledger, %d admitted, want %d", got, want)
	}
}

// TestSQLiteWindowKeptInTheProcessSeesEveryWriter: the limiter keeps its
// pools' windows in the process between decisions on its one connection,
// and still counts what another process wrote to the log (another
// connection's commit) and what another limiter of this process wrote on
// the same connection: each is refused what would take the pool over its
// limit.
func TestSQLiteWindowKeptInTheProcessSeesEveryWriter(t *testing.T) {
	path := filepath.Join(t.TempDir(), "kept.db")
	now := clocktest.NewFake(time.Now())
	costs := parseCosts(t, "pools:\n  default: {limit: 6, window: 1h}\noperations:\n  videos.list: {default: 1}\n")
	single := func() *sql.DB {
		db := openDB(t, path, false)
		db.SetMaxOpenConns(1) // as the store's writer: one connection
		db.SetMaxIdleConns(1)
		return db
	}
	on := func(db *sql.DB) limiter {
		l, err := newSQLite(db, limOpts{QuotaKey: "kept", Costs: costs, Timeout: hangFree, Logger: quiet, Clock: now})
		if err != nil {
			t.Fatal(err)
		}
		return l
	}
	mine, theirs := single(), single()
	a, beside := on(mine), on(mine)
	for range 2 {
		if d := spend(t, a, 1); !d.Allowed {
			t.Fatalf("a's call: %+v", d)
		}
		now.Advance(time.Second)
	}
	// Another process's call, written by no limiter of this one: 4 of 6.
	if _, err := theirs.Exec(`INSERT INTO quota_log (quota_key, pool, id, at_ms, units) VALUES ('kept', 'default', ?, ?, 2)`,
		fmt.Sprintf("%d-other", now.Now().UnixMilli()), now.Now().UnixMilli()); err != nil {
		t.Fatal(err)
	}
	now.Advance(time.Second)
	if d := spend(t, a, 3); d.Allowed {
		t.Fatalf("a admitted 3 units with 4 of 6 spent, another process's 2 among them: %+v", d)
	}
	if d := spend(t, beside, 1); !d.Allowed { // this process's other limiter: 5 of 6
		t.Fatalf("the limiter beside's call: %+v", d)
	}
	now.Advance(time.Second)
	if d := spend(t, a, 2); d.Allowed {
		t.Fatalf("a admitted 2 units with 5 of 6 spent, the limiter beside's 1 among them: %+v", d)
	}
	if d := spend(t, a, 1); !d.Allowed {
		t.Fatalf("a's last unit: %+v", d)
	}
	if d := spend(t, on(theirs), 1); d.Allowed {
		t.Fatalf("the other process admitted a unit over the limit: %+v", d)
	}
}

// TestSQLiteDecisionCutByItsContextSaysSo: a stop that ends the caller's
// context while a decision's transaction is open rolls it back under the
// decision; what the decision returns then is the context's end, so that
// a job reads a stop, not a failure of the database.
func TestSQLiteDecisionCutByItsContextSaysSo(t *testing.T) {
	t.Parallel()
	costs := testCosts(t, 1_000_000, 0, 5, time.Hour)
	w, err := newSQLite(openDB(t, filepath.Join(t.TempDir(), "cut.db"), false), limOpts{QuotaKey: "cut", Costs: costs})
	if err != nil {
		t.Fatal(err)
	}
	var cut, other int
	for i := range 3000 {
		ctx, cancel := context.WithCancel(context.Background())
		stop := time.AfterFunc(time.Duration(i%400)*time.Microsecond, cancel)
		_, err := w.Take(ctx, ingest.Caller{}, "search.list")
		stop.Stop()
		cancel()
		switch {
		case err == nil:
		case errors.Is(err, context.Canceled):
			cut++
		default:
			other++
			if other == 1 {
				t.Errorf("a decision its context ended said %v, which is not the context's end", err)
			}
		}
	}
	if other > 0 {
		t.Errorf("%d decisions cut by their context said something else (%d said the cut)", other, cut)
	}
	if cut == 0 {
		t.Fatal("no decision was cut by its context: the test tried nothing")
	}
}

package quota_test

// The limiter on PostgreSQL under faults, as production breaks: many
// processes on one key, a hung server, a worker killed or hung in the
// middle of a decision, hosts whose clocks disagree, a server clock that
// steps. Pools hold 100 units over an hour (faultCosts) unless a test says
// otherwise, so a test counts every unit admitted exactly.

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/clock"
	"github.com/ingestworks/ingest/internal/rig/pgtest"
	"github.com/ingestworks/ingest/quota"
)

// pgCount is one number from the test's own connection.
func pgCount(t testing.TB, q interface {
	QueryRow(string, ...any) *sql.Row
}, query string, args ...any) int64 {
	t.Helper()
	var n int64
	if err := q.QueryRow(query, args...).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// fillPG takes cheap calls until the pool refuses one; it returns how many
// were admitted.
func fillPG(t *testing.T, l limiter) int {
	t.Helper()
	for n := range 2*capacity + 1 {
		if !take(t, l, "videos.list").Allowed {
			return n
		}
	}
	t.Fatalf("over %d calls and the pool never filled", 2*capacity)
	return 0
}

// TestPostgresManyProcessesOneKey: several processes (a store pool each)
// with several callers each hammer one quota key: the pool admits exactly
// its capacity, and the log holds exactly what was admitted. The server's
// default isolation is repeatable read, under which a snapshot taken before
// the lock would miss the last holder's admission.
func TestPostgresManyProcessesOneKey(t *testing.T) {
	t.Parallel()
	url := pgtest.URL(t) + "&default_transaction_isolation=repeatable%20read"
	key, costs := quotaKey(t), faultCosts(t, false)
	var admitted, refused atomic.Int64
	var wg sync.WaitGroup
	for range 6 {
		l := pgLimiter(t, url, limOpts{QuotaKey: key, Costs: costs, Timeout: 30 * time.Second})
		for range 4 {
			wg.Go(func() {
				for refused.Load() < 50 {
					d, err := l.Take(context.Background(), ingest.Caller{}, "videos.list")
					switch {
					case err != nil || d.Unmetered:
						t.Errorf("take: %+v, %v", d, err)
						return
					case d.Allowed:
						admitted.Add(1)
					default:
						refused.Add(1)
					}
				}
			})
		}
	}
	wg.Wait()
	logged := pgCount(t, rawPG(t, url), `SELECT count(*) FROM quota_log WHERE quota_key = $1`, key)
	t.Logf("6 processes x 4 callers on one key: %d admitted, %d in the log, %d refused; capacity %d", admitted.Load(), logged, refused.Load(), capacity)
	if admitted.Load() != capacity || logged != capacity {
		t.Fatalf("admitted %d, logged %d; want %d", admitted.Load(), logged, capacity)
	}
}

// TestFaultPostgresHung: the server hangs (SIGSTOP, as a host that stops
// answering). Every decision, cheap or not, fails within the timeout with
// ErrUnavailable and nothing is admitted; once it answers again (SIGCONT)
// decisions are exact again.
func TestFaultPostgresHung(t *testing.T) {
	t.Parallel()
	srv := pgtest.Start(t) // of its own: stopping the shared one would stop every test
	url := srv.URL(t)
	key, costs := quotaKey(t), faultCosts(t, false)
	const timeout = 500 * time.Millisecond
	// The fault's deadline is the hung calls' alone: the takes before the
	// fault and the fill after SIGCONT check no fault, and go through a
	// limiter of their own with a timeout no loaded machine (nor a resumed
	// server catching up) reaches.
	l := pgLimiter(t, url, limOpts{QuotaKey: key, Costs: costs, Timeout: timeout})
	steady := pgLimiter(t, url, limOpts{QuotaKey: key, Costs: costs, Timeout: time.Minute})
	before := 0
	for range 60 {
		if take(t, steady, "videos.list").Allowed {
			before++
		}
	}
	if err := srv.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	resumed := false
	resume := func() {
		if !resumed {
			resumed = true
			if err := srv.Signal(syscall.SIGCONT); err != nil {
				t.Error(err)
			}
		}
	}
	defer resume()
	var slowest atomic.Int64
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for range 3 {
				start := time.Now()
				d, err := l.Take(context.Background(), ingest.Caller{}, "videos.list")
				took := time.Since(start)
				slowest.Store(max(slowest.Load(), int64(took)))
				if took > timeout+time.Second || !errors.Is(err, quota.ErrUnavailable) || d.Allowed {
					t.Errorf("a call to a hung server: %+v, %v after %s; want ErrUnavailable within %s", d, err, took, timeout)
				}
			}
		})
	}
	wg.Wait()
	resume()
	after := fillPG(t, steady)
	logged := pgCount(t, rawPG(t, url), `SELECT count(*) FROM quota_log WHERE quota_key = $1`, key)
	t.Logf("hung server: 12 calls refused with ErrUnavailable, the slowest in %s (timeout %s); %d before + %d after = %d / %d, %d in the log",
		time.Duration(slowest.Load()), timeout, before, after, before+after, capacity, logged)
	if before+after != capacity || logged != capacity {
		t.Fatalf("admitted %d + %d, logged %d; want %d", before, after, logged, capacity)
	}
}

// helper starts TestHelperProcess on the PostgreSQL limiter at url: one
// caller taking calls (search.list draws from two pools) until killed.
func helper(t *testing.T, url, key string, timeout time.Duration) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperProcess$")
	cmd.Env = append(os.Environ(), "QUOTA_HELPER=postgres", "QUOTA_TARGET="+url, "QUOTA_KEY="+key,
		"QUOTA_OUT="+filepath.Join(t.TempDir(), "helper.log"), "QUOTA_WORKERS=1", "QUOTA_SEED=1",
		"QUOTA_TIMEOUT="+timeout.String(), "QUOTA_START=0",
		"QUOTA_UNTIL="+strconv.FormatInt(time.Now().Add(time.Hour).UnixMilli(), 10))
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Signal(syscall.SIGCONT); cmd.Process.Kill(); cmd.Wait() })
	return cmd
}

// midDecision waits until the helper's caller has logged calls, then holds
// the quota key's clock row until the helper's next admission has written
// its log rows and waits on it, in the middle of its transaction. It
// returns the rows committed so far, the helper's backend, and the release.
func midDecision(t *testing.T, db *sql.DB, key string) (committed int64, backend int64, release func()) {
	t.Helper()
	waitUntil(t, "the helper's first admissions", func() bool {
		return pgCount(t, db, `SELECT count(*) FROM quota_log WHERE quota_key = $1`, key) > 0
	})
	tx, err := db.Begin()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(`SELECT 1 FROM quota_clock WHERE quota_key = $1 FOR UPDATE`, key); err != nil {
		t.Fatal(err)
	}
	// No admission commits without the clock row: this count holds.
	committed = pgCount(t, tx, `SELECT count(*) FROM quota_log WHERE quota_key = $1`, key)
	waitUntil(t, "the helper waiting on the clock row", func() bool {
		err := db.QueryRow(`SELECT pid FROM pg_stat_activity WHERE datname = current_database()
			AND wait_event_type = 'Lock' AND query LIKE 'INSERT INTO quota_clock%'`).Scan(&backend)
		return err == nil
	})
	return committed, backend, func() { tx.Rollback() }
}

// hungMidDecision is midDecision with the helper stopped (SIGSTOP) while
// its admission waits on the clock row; it returns the ids of the
// admissions committed so far. A stop lands only once the kernel
// schedules one of the helper's threads, after kill returns: until then
// its others may run on and commit when the row is released, so the row
// stays held until every thread is stopped. The helper's wait on the row
// is bounded by its own timeout (its lock_timeout): on a slow machine it
// may have given up before the stop landed, and the helper is caught
// again.
func hungMidDecision(t *testing.T, db *sql.DB, key string, cmd *exec.Cmd) (committed map[string]bool, release func()) {
	t.Helper()
	for range 10 {
		_, backend, release := midDecision(t, db, key)
		if err := cmd.Process.Signal(syscall.SIGSTOP); err != nil {
			t.Fatal(err)
		}
		waitUntil(t, "every thread of the helper to stop", func() bool { return stopped(t, cmd.Process.Pid) })
		if pgCount(t, db, `SELECT count(*) FROM pg_stat_activity WHERE pid = $1 AND wait_event_type = 'Lock'`, backend) == 1 {
			return logIDs(t, db, key), release // the row held, nothing commits
		}
		release()
		if err := cmd.Process.Signal(syscall.SIGCONT); err != nil {
			t.Fatal(err)
		}
	}
	t.Fatal("the helper's admission stopped waiting on the clock row before the helper stopped, 10 times")
	return nil, nil
}

// stopped reports whether every thread of process pid is stopped.
func stopped(t *testing.T, pid int) bool {
	t.Helper()
	stats, err := filepath.Glob("/proc/" + strconv.Itoa(pid) + "/task/*/stat")
	if err != nil || len(stats) == 0 {
		t.Fatalf("the threads of process %d: %v", pid, err)
	}
	for _, f := range stats {
		b, err := os.ReadFile(f)
		if err != nil {
			continue // gone since
		}
		// pid (comm) state ...: comm may hold spaces, not ")"
		if state := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:])); len(state) == 0 || state[0] != "T" {
			return false
		}
	}
	return true
}

func waitUntil(t *testing.T, what string, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatalf("waited 30s for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestFaultPostgresWorkerKilled: a worker process is killed (SIGKILL) in
// the middle of an admission, its log rows written and not committed. They
// never count, and the next decision of another process goes ahead.
func TestFaultPostgresWorkerKilled(t *testing.T) {
	t.Parallel()
	url := pgtest.URL(t)
	db := rawPG(t, url)
	openStore(t, url)
	key := quotaKey(t)
	cmd := helper(t, url, key, 10*time.Second)
	committed, backend, release := midDecision(t, db, key)
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	release()
	waitUntil(t, "the killed worker's backend to end", func() bool {
		return pgCount(t, db, `SELECT count(*) FROM pg_stat_activity WHERE pid = $1`, backend) == 0
	})
	after := pgCount(t, db, `SELECT count(*) FROM quota_log WHERE quota_key = $1`, key)
	// The fault is over (its backend ended): the next decision checks only
	// that nothing of it counts, under a timeout no loaded machine reaches.
	l := pgLimiter(t, url, limOpts{QuotaKey: key, Costs: propCosts(t), Timeout: time.Minute})
	start := time.Now()
	d := take(t, l, "videos.list")
	t.Logf("worker killed mid-admission: %d log rows committed before, %d after; the next decision in %s: allowed %v",
		committed, after, time.Since(start), d.Allowed)
	if after != committed {
		t.Fatalf("the killed worker's uncommitted admission left %d log rows", after-committed)
	}
}

// TestFaultPostgresWorkerHung: a worker's host stops (SIGSTOP) in the
// middle of an admission, holding the quota key's lock with its
// connection open. The server ends its transaction once it has been idle
// for the worker's timeout, and other workers decide again; what it wrote
// never counts.
func TestFaultPostgresWorkerHung(t *testing.T) {
	t.Parallel()
	url := pgtest.URL(t)
	db := rawPG(t, url)
	openStore(t, url)
	key := quotaKey(t)
	const hungFor = time.Second
	cmd := helper(t, url, key, hungFor)
	before, release := hungMidDecision(t, db, key, cmd)
	release()
	l := pgLimiter(t, url, limOpts{QuotaKey: key, Costs: propCosts(t), Timeout: 10 * time.Second})
	start := time.Now()
	d := take(t, l, "videos.list")
	took := time.Since(start)
	// By ids, not a count: decisions trim what has left the pools' short
	// window, which a slow run of this test may reach.
	after := logIDs(t, db, key)
	var extra []string
	for id := range after {
		if !before[id] && id != d.ID {
			extra = append(extra, id)
		}
	}
	t.Logf("worker hung mid-admission: another process decided after %s (the hung one's timeout %s); %d admissions in the log before, %d after",
		took, hungFor, len(before), len(after))
	if len(extra) > 0 || d.Allowed != after[d.ID] {
		t.Fatalf("admissions logged since the hung one began: %q; the other process's %q allowed %v, logged %v (the hung worker's admission must not count)",
			extra, d.ID, d.Allowed, after[d.ID])
	}
}

// logIDs is the ids of the admissions in the quota key's log.
func logIDs(t *testing.T, db *sql.DB, key string) map[string]bool {
	t.Helper()
	rows, err := db.Query(`SELECT DISTINCT id FROM quota_log WHERE quota_key = $1`, key)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	ids := map[string]bool{}
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			t.Fatal(err)
		}
		ids[id] = true
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return ids
}

// TestPostgresHostClocksDiffer: two hosts whose clocks are 13 hours apart
// share one pool with a calendar day. Both decide by the server's clock:
// together they admit the capacity once, every decision is stamped with
// the server's time, and a block ends at the upstream's next reset by it.
func TestPostgresHostClocksDiffer(t *testing.T) {
	t.Parallel()
	url := pgtest.URL(t)
	key, costs := quotaKey(t), faultCosts(t, true)
	a := pgLimiter(t, url, limOpts{QuotaKey: key, Costs: costs})
	b := pgLimiter(t, url, limOpts{QuotaKey: key, Costs: costs,
		Clock: clock.Func(func() time.Time { return time.Now().Add(13 * time.Hour) })})
	n := 0
	for i := range 2*capacity + 2 {
		l := []limiter{a, b}[i%2]
		d := take(t, l, "videos.list")
		if off := time.Since(d.At); off > 5*time.Second || off < -5*time.Second {
			t.Fatalf("decision %d stamped %s, %s from the server's clock", i, d.At, off)
		}
		if d.Allowed {
			n++
		}
	}
	if n != capacity {
		t.Fatalf("two hosts 13h apart admitted %d, want %d", n, capacity)
	}
	until, err := b.Block(context.Background(), "default", "")
	if want := ingest.UpstreamReset(time.Now()); err != nil || !until.Equal(want) {
		t.Fatalf("block from the host 13h ahead: until %s, %v; want the next reset by the server's clock %s", until, err, want)
	}
}

// TestFaultClockStepPostgres: the server's clock steps 25 hours ahead,
// then back. The worker's boot clock does not move: the limiter does not
// believe the step, and the pool never admits more than its capacity.
func TestFaultClockStepPostgres(t *testing.T) {
	t.Parallel()
	url := pgtest.URL(t)
	key, costs := quotaKey(t), faultCosts(t, false)
	boot := steadyBoot()
	open := func(off time.Duration) limiter {
		return pgLimiter(t, url, limOpts{QuotaKey: key, Costs: costs, Uptime: boot, ClockOffset: off})
	}
	before := 0
	for range 60 {
		if take(t, open(0), "videos.list").Allowed {
			before++
		}
	}
	ahead := fillPG(t, open(25*time.Hour))
	back := fillPG(t, open(0))
	t.Logf("the server's clock +25h, then back: %d before, %d during, %d after: %d / %d", before, ahead, back, before+ahead+back, capacity)
	if before+ahead+back != capacity {
		t.Fatalf("admitted %d across the step, want %d", before+ahead+back, capacity)
	}
}

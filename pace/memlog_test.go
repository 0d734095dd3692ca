package pace_test

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math/rand"
	"reflect"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/internal/rig/storetest"
	"github.com/ingestworks/ingest/ledger"
	"github.com/ingestworks/ingest/quota"
	"github.com/ingestworks/ingest/wiring"
)

// memLog is the embedded limiter's log of entries (quota_log) kept in
// memory, for the days tests that do not need it on the file: every other
// part of the limiter stays in the store's database (its turns, clock,
// pools and blocks, the ledger it writes before it answers and reads back
// what its log lacks), and its code decides as it does in a worker. The
// window's sums over the log were most of what a days test spent, and
// they are not the days' promise: the limiter's own tests hold them, on
// SQLite, PostgreSQL and Redis (quota's conformance tests), and the days
// tests of a restart and of a second process joining keep the log on the
// file, so that the pacer beside the whole embedded limiter is still run
// over days.
//
// A decision's transaction here never rolls back once it wrote the log
// (one process; a file on a disk that answers), so the entries need not
// follow the transaction.
type memLog struct {
	quota.ClockRows  // the clock rows, but Newest
	quota.LedgerRows // the ledger, but Missing

	mu   sync.Mutex
	pool map[[2]string][]logEntry // by quota key and pool, in Reaching's order
	ids  map[[3]string]bool       // quota key, pool, id
}

type logEntry struct {
	id        string
	at, units int64
}

// memTables are t with the log in memory.
func memTables(t quota.Tables) quota.Tables {
	m := &memLog{ClockRows: t.Clocks, LedgerRows: t.Ledger, pool: map[[2]string][]logEntry{}, ids: map[[3]string]bool{}}
	t.Log, t.Clocks, t.Ledger = m, m, m
	return t
}

// byReach is the order the limiter's ids give: time, then sequence.
func byReach(a, b logEntry) int {
	return cmp.Or(cmp.Compare(a.at, b.at), cmp.Compare(len(a.id), len(b.id)), cmp.Compare(a.id, b.id))
}

func (m *memLog) Add(_ context.Context, _ *sql.Tx, quotaKey, pool, id string, at, units int64) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.ids[[3]string{quotaKey, pool, id}] {
		return false, nil
	}
	m.ids[[3]string{quotaKey, pool, id}] = true
	k := [2]string{quotaKey, pool}
	e := logEntry{id: id, at: at, units: units}
	i, _ := slices.BinarySearchFunc(m.pool[k], e, byReach)
	m.pool[k] = slices.Insert(m.pool[k], i, e)
	return true, nil
}

func (m *memLog) Drop(_ context.Context, quotaKey, id string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	for k, es := range m.pool {
		if k[0] == quotaKey {
			m.pool[k] = slices.DeleteFunc(es, func(e logEntry) bool { return e.id == id })
			delete(m.ids, [3]string{k[0], k[1], id})
		}
	}
	return nil
}

func (m *memLog) Trim(_ context.Context, _ *sql.Tx, quotaKey, pool string, keep int64) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	k := [2]string{quotaKey, pool}
	es := m.pool[k]
	n := 0
	for n < len(es) && es[n].at <= keep {
		delete(m.ids, [3]string{quotaKey, pool, es[n].id})
		n++
	}
	m.pool[k] = es[n:]
	return nil
}

func (m *memLog) Newest(_ context.Context, _ *sql.Tx, quotaKey string) (int64, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var newest int64
	for k, es := range m.pool {
		if k[0] == quotaKey && len(es) > 0 {
			newest = max(newest, es[len(es)-1].at)
		}
	}
	return newest, nil
}

// Missing is the ledger's calls and charges that this log lacks.
func (m *memLog) Missing(ctx context.Context, tx *sql.Tx, quotaKey string, since, after int64) (ingest.Recalled, error) {
	rec, err := m.LedgerRows.Missing(ctx, tx, quotaKey, since, after)
	if err != nil {
		return rec, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	calls := rec.Calls[:0]
	for _, c := range rec.Calls {
		c.Charges = slices.DeleteFunc(c.Charges, func(ch ingest.Charge) bool { return m.ids[[3]string{quotaKey, ch.Pool, c.ID}] })
		if len(c.Charges) > 0 {
			calls = append(calls, c)
		}
	}
	rec.Calls = calls
	if len(calls) == 0 {
		rec.Calls = nil // as the file's read of none
	}
	return rec, nil
}

// entries are a pool's entries after after, with ledger also the ledger's
// charges the log lacks, in Reaching's order.
func (m *memLog) entries(ctx context.Context, tx *sql.Tx, quotaKey, pool string, after int64, ledger bool) ([]logEntry, error) {
	var out []logEntry
	if ledger {
		rec, err := m.Missing(ctx, tx, quotaKey, after+1, -1)
		if err != nil {
			return nil, err
		}
		for _, c := range rec.Calls {
			for _, ch := range c.Charges {
				if ch.Pool == pool && ch.Units > 0 {
					out = append(out, logEntry{id: c.ID, at: c.At.UnixMilli(), units: ch.Units})
				}
			}
		}
	}
	m.mu.Lock()
	for _, e := range m.pool[[2]string{quotaKey, pool}] {
		if e.at > after {
			out = append(out, e)
		}
	}
	m.mu.Unlock()
	if ledger {
		slices.SortFunc(out, byReach)
	}
	return out, nil
}

func (m *memLog) Used(ctx context.Context, tx *sql.Tx, quotaKey, pool string, horizon, dayStart, keep int64, ledger bool) (used, usedDay int64, err error) {
	var es []logEntry
	if ledger {
		es, err = m.entries(ctx, tx, quotaKey, pool, keep, ledger)
	} else { // the decision's read: the log alone, read where it is
		m.mu.Lock()
		defer m.mu.Unlock()
		es = m.pool[[2]string{quotaKey, pool}]
		i, _ := slices.BinarySearchFunc(es, keep, func(e logEntry, keep int64) int { return cmp.Compare(e.at, keep+1) })
		es = es[i:]
	}
	for _, e := range es {
		if e.at > horizon {
			used += e.units
		}
		if dayStart > 0 && e.at >= dayStart {
			usedDay += e.units
		}
	}
	return used, usedDay, err
}

func (m *memLog) Reaching(ctx context.Context, tx *sql.Tx, quotaKey, pool string, horizon, need int64, ledger bool) (int64, error) {
	es, err := m.entries(ctx, tx, quotaKey, pool, horizon, ledger)
	var run int64
	for _, e := range es {
		if run += e.units; run >= need {
			return e.at, err
		}
	}
	return 0, err
}

// The log in memory answers as the log on the file: the same random
// entries added, trimmed and dropped in both, each beside a ledger of the
// same calls, which the log has, lacks or gave back, every read of the
// limiter's (Used and Reaching, with the ledger and without, Newest,
// Missing) gives the same on both.
func TestMemLogAnswersAsTheFile(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	fileLed, memLed := ledger.New(storetest.Open(t)), ledger.New(storetest.Open(t))
	file, mem := wiring.Tables(fileLed.Tables()), memTables(wiring.Tables(memLed.Tables()))
	rng := rand.New(rand.NewSource(1))
	keys, pools := []string{"q", "r"}, []string{"default", "search"}
	var ids []string
	same := func(what string, file, mem any) {
		t.Helper()
		if !reflect.DeepEqual(file, mem) {
			t.Fatalf("%s: the file says %v, memory %v", what, file, mem)
		}
	}
	for step := range 3000 {
		key, pool := keys[rng.Intn(2)], pools[rng.Intn(2)]
		at := int64(1000 + rng.Intn(500))
		switch op := rng.Intn(10); {
		case op < 4: // an entry, often of a call the ledger holds
			id := fmt.Sprintf("%d-%d", at, rng.Intn(1000))
			if len(ids) > 0 && rng.Intn(2) == 0 {
				id = ids[rng.Intn(len(ids))]
			}
			units := int64(1 + rng.Intn(3))
			a, err1 := file.Log.Add(ctx, nil, key, pool, id, at, units)
			b, err2 := mem.Log.Add(ctx, nil, key, pool, id, at, units)
			if err1 != nil || err2 != nil {
				t.Fatal(err1, err2)
			}
			same(fmt.Sprintf("step %d: Add %s %s %s", step, key, pool, id), a, b)
		case op < 6: // a call in the ledger, which the log may lack
			id := fmt.Sprintf("%d-%d", at, rng.Intn(1000))
			ids = append(ids, id)
			c := ingest.Call{QuotaKey: key, ID: id, At: time.UnixMilli(at).UTC(), Op: "videos.list",
				Charges: []ingest.Charge{{Pool: pool, Units: int64(rng.Intn(3))}}}
			giveBack := rng.Intn(5) == 0
			for _, led := range []*ledger.Ledger{fileLed, memLed} {
				if err := led.RecordCall(ctx, c); err != nil {
					t.Fatal(err)
				}
				if giveBack {
					if err := led.RecordGiveBack(ctx, c, c.At); err != nil {
						t.Fatal(err)
					}
				}
			}
		case op < 7:
			keep := int64(900 + rng.Intn(300))
			if err := errors.Join(file.Log.Trim(ctx, nil, key, pool, keep), mem.Log.Trim(ctx, nil, key, pool, keep)); err != nil {
				t.Fatal(err)
			}
		case op < 8 && len(ids) > 0:
			id := ids[rng.Intn(len(ids))]
			if err := errors.Join(file.Log.Drop(ctx, key, id), mem.Log.Drop(ctx, key, id)); err != nil {
				t.Fatal(err)
			}
		default:
			horizon, dayStart := int64(1000+rng.Intn(400)), int64(rng.Intn(2)*(1000+rng.Intn(400)))
			keep, need, withLedger := min(horizon, max(dayStart-1, 0)), int64(1+rng.Intn(40)), rng.Intn(2) == 0
			if dayStart == 0 {
				keep = horizon
			}
			u1, d1, err1 := file.Log.Used(ctx, nil, key, pool, horizon, dayStart, keep, withLedger)
			u2, d2, err2 := mem.Log.Used(ctx, nil, key, pool, horizon, dayStart, keep, withLedger)
			r1, err3 := file.Log.Reaching(ctx, nil, key, pool, horizon, need, withLedger)
			r2, err4 := mem.Log.Reaching(ctx, nil, key, pool, horizon, need, withLedger)
			n1, err5 := file.Clocks.Newest(ctx, nil, key)
			n2, err6 := mem.Clocks.Newest(ctx, nil, key)
			m1, err7 := file.Ledger.Missing(ctx, nil, key, horizon, -1)
			m2, err8 := mem.Ledger.Missing(ctx, nil, key, horizon, -1)
			if err := errors.Join(err1, err2, err3, err4, err5, err6, err7, err8); err != nil {
				t.Fatal(err)
			}
			what := fmt.Sprintf("step %d: %s %s after %d, day from %d, keep %d, need %d, with the ledger %t", step, key, pool, horizon, dayStart, keep, need, withLedger)
			same(what+": Used", [2]int64{u1, d1}, [2]int64{u2, d2})
			same(what+": Reaching", r1, r2)
			same(what+": Newest", n1, n2)
			same(what+": Missing", m1, m2)
		}
	}
}

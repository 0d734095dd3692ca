package ledger

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/ingestworks/ingest"
)

// Follow returns a reader of quotaKey's calls that reads the ledger in
// write order: its first read, or one from before what it keeps, reads
// the calls since a time as Calls does; each later one reads only what
// was written after its last (a call's rows, a call given back, whatever
// time the limiter stamped them with), and gives what Calls would give
// at that moment. For a reader that reads again and again (the pacer at
// each plan, a server's quota report at each request after a change).
// Safe for concurrent use.
func (l *Ledger) Follow(quotaKey string) func(ctx context.Context, since time.Time) ([]ingest.Call, error) {
	f := &follower{l: l, key: quotaKey}
	return f.read
}

// Written is quotaKey's counter of writes: it moves whenever its ledger
// gains a call, a call's rows change, or a call is given back.
func (l *Ledger) Written(ctx context.Context, quotaKey string) (int64, error) {
	seq, err := written(ctx, l.r, quotaKey)
	if err != nil {
		return 0, fmt.Errorf("ledger of %s: %w", quotaKey, err)
	}
	return seq, nil
}

// writtenSQL reads a quota key's counter of writes; no row is 0.
const writtenSQL = `SELECT last FROM ledger_seq WHERE quota_key = ?`

func init() { tableSQL = append(tableSQL, writtenSQL) }

func written(ctx context.Context, q querier, quotaKey string) (seq int64, err error) {
	rows, err := q.QueryContext(ctx, writtenSQL, quotaKey)
	if err != nil {
		return 0, err
	}
	defer rows.Close()
	if rows.Next() {
		err = rows.Scan(&seq)
	}
	return seq, errors.Join(err, rows.Err())
}

// follower is one reader's cursor in a quota key's ledger: the calls it
// read since from, as of the counter's seq.
type follower struct {
	l   *Ledger
	key string

	mu    sync.Mutex
	begun bool
	from  time.Time
	seq   int64
	calls []ingest.Call // by time, then id, as Calls orders them
	ids   map[string]bool
	asked [4]time.Time // the last reads' since, the latest first
}

func (f *follower) read(ctx context.Context, since time.Time) ([]ingest.Call, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	tx, err := f.l.turns.Snapshot(ctx, f.l.r)
	if err != nil {
		return nil, fmt.Errorf("ledger of %s: %w", f.key, err)
	}
	defer tx.Rollback()
	if err := f.catchUp(ctx, tx, since); err != nil {
		f.begun = false // read whole again next time
		return nil, fmt.Errorf("ledger of %s: %w", f.key, err)
	}
	f.trim(since)
	i, _ := slices.BinarySearchFunc(f.calls, since, func(c ingest.Call, t time.Time) int { return c.At.Compare(t) })
	return slices.Clone(f.calls[i:]), nil
}

// trim forgets the calls before the earliest of the last reads' since
// (a reader that asks from a few times in turn, as a report does, is read
// from what is kept): a read from before them reads whole again.
func (f *follower) trim(since time.Time) {
	copy(f.asked[1:], f.asked[:])
	f.asked[0] = since
	keep := since
	for _, t := range f.asked {
		if !t.IsZero() && t.Before(keep) {
			keep = t
		}
	}
	if !keep.After(f.from) {
		return
	}
	i, _ := slices.BinarySearchFunc(f.calls, keep, func(c ingest.Call, t time.Time) int { return c.At.Compare(t) })
	for _, c := range f.calls[:i] {
		delete(f.ids, c.ID)
	}
	f.calls, f.from = slices.Delete(f.calls, 0, i), keep
}

// catchUp brings the calls kept up to the ledger as tx sees it: the
// counter first, then whatever is numbered after the last one read and
// at most it, all in one snapshot.
func (f *follower) catchUp(ctx context.Context, tx *sql.Tx, since time.Time) error {
	seq, err := written(ctx, tx, f.key)
	if err != nil {
		return err
	}
	if !f.begun || since.Before(f.from) {
		all, err := calls(ctx, tx, f.key, since)
		if err != nil {
			return err
		}
		f.calls, f.from, f.seq, f.begun = all, since, seq, true
		f.ids = make(map[string]bool, len(all))
		for _, c := range all {
			f.ids[c.ID] = true
		}
		return nil
	}
	if seq == f.seq {
		return nil
	}
	changed, gone, err := f.since(ctx, tx, seq)
	if err != nil {
		return err
	}
	f.apply(changed, gone)
	f.seq = seq
	return nil
}

// since reads the calls with a row written after f.seq and at most seq,
// each whole (every row of it), and the ids of the calls given back in
// that span: by the index by write number, then each call by its key, in
// the key's order (the time's "+ 0" and that order keep SQLite's planner
// off the index by time, which would read the window).
func (f *follower) since(ctx context.Context, tx *sql.Tx, seq int64) (changed []ingest.Call, gone []string, err error) {
	rows, err := tx.QueryContext(ctx, `
SELECT `+callColumns+`
FROM ledger WHERE quota_key = ?1 AND at_ms + 0 >= ?2
  AND call_id IN (SELECT call_id FROM ledger n WHERE n.quota_key = ?1 AND n.seq > ?3 AND n.seq <= ?4 AND n.at_ms + 0 >= ?2)`+notGivenBack+`
ORDER BY call_id, pool`, f.key, msOf(f.from), f.seq, seq)
	if err != nil {
		return nil, nil, err
	}
	if changed, err = scanCalls(rows, f.key); err != nil {
		return nil, nil, err
	}
	slices.SortStableFunc(changed, byTimeAndID)
	rows, err = tx.QueryContext(ctx, `SELECT call_id FROM ledger_given_back WHERE quota_key = ? AND seq > ? AND seq <= ?`, f.key, f.seq, seq)
	if err != nil {
		return nil, nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, nil, err
		}
		gone = append(gone, id)
	}
	return changed, gone, rows.Err()
}

// apply replaces the calls kept by changed (new ones added), and drops
// the calls given back.
func (f *follower) apply(changed []ingest.Call, gone []string) {
	drop := map[string]bool{}
	for _, c := range changed {
		if f.ids[c.ID] {
			drop[c.ID] = true
		}
	}
	for _, id := range gone {
		if f.ids[id] {
			drop[id] = true
		}
	}
	if len(drop) > 0 {
		f.calls = slices.DeleteFunc(f.calls, func(c ingest.Call) bool { return drop[c.ID] })
		for id := range drop {
			delete(f.ids, id)
		}
	}
	n := len(f.calls)
	f.calls = append(f.calls, changed...)
	for _, c := range changed {
		f.ids[c.ID] = true
	}
	// New calls are mostly the newest: sort only when one is not.
	if n > 0 && len(changed) > 0 && byTimeAndID(f.calls[n-1], f.calls[n]) > 0 {
		slices.SortStableFunc(f.calls, byTimeAndID)
	}
}

// byTimeAndID orders calls as Calls does (the ledger's text columns
// compare bytewise on both databases).
func byTimeAndID(a, b ingest.Call) int {
	if c := a.At.Compare(b.At); c != 0 {
		return c
	}
	return strings.Compare(a.ID, b.ID)
}

// Days is quotaKey's DailyUnits whose reads of a single day (the
// operator's chart reads today's on every request) go through a follower:
// after the first, each reads only what the ledger was written since,
// and sums what DailyUnits would. Reads of more days or of another key
// are DailyUnits'.
type Days struct {
	l      *Ledger
	key    string
	follow func(ctx context.Context, since time.Time) ([]ingest.Call, error)
}

// FollowDays returns quotaKey's daily units read so.
func (l *Ledger) FollowDays(quotaKey string) *Days {
	return &Days{l: l, key: quotaKey, follow: l.Follow(quotaKey)}
}

func (d *Days) DailyUnits(ctx context.Context, quotaKey string, since time.Time, days int) (map[string][]int64, error) {
	if days != 1 || quotaKey != d.key {
		return d.l.DailyUnits(ctx, quotaKey, since, days)
	}
	start := since.UTC().Truncate(24 * time.Hour)
	calls, err := d.follow(ctx, start)
	if err != nil {
		return nil, fmt.Errorf("daily units of %s: %w", quotaKey, err)
	}
	out := map[string][]int64{}
	end := start.Add(24 * time.Hour)
	for _, c := range calls {
		if !c.At.Before(end) {
			break
		}
		for _, ch := range c.Charges {
			if out[ch.Pool] == nil {
				out[ch.Pool] = make([]int64, 1)
			}
			out[ch.Pool][0] += ch.Units
		}
	}
	return out, nil
}

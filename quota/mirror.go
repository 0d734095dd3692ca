package quota

import (
	"context"
	"database/sql"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
)

// The embedded limiter on SQLite sums a pool's log over its window at every
// decision: a day of a busy pool is thousands of entries read for each
// call. The mirror keeps those entries in the process, so that a decision
// sums them in memory and SQLite reads only what is new. It answers a
// decision only when the log cannot have changed but through it: no other
// connection has committed since its last decision on this one (the
// database's version, LogWindow), and no other writer in this process
// wrote the log (logWrites). Anything else, and the pool is read from the
// database again, as without it. Every write still goes to the database
// as before; the mirror only spares the reads.

// logEntry is one entry of a pool's log. In a mirror's entries, sum is
// the units of the entries up to it and its own, counted from any start:
// the units of a span are its last sum less the sum before it, so that a
// decision sums its window in two lookups, not a walk of every entry in it.
type logEntry struct {
	ID        string
	At, Units int64
	sum       int64
}

// summed sets the sums of es, counted on from before.
func summed(before int64, es []logEntry) []logEntry {
	for i := range es {
		before += es[i].Units
		es[i].sum = before
	}
	return es
}

// logVersion says which connection a decision ran on and what that
// connection had seen of the others' commits (LogWindow.Version).
type logVersion struct{ Conn, Data int64 }

// LogWindow is what a log the mirror can stand in for has beside LogRows.
type LogWindow interface {
	// Window hands fn a pool's entries after after, in the order of their
	// ids (time, then sequence: Reaching's).
	Window(ctx context.Context, tx *sql.Tx, quotaKey, pool string, after int64, fn func(id string, at, units int64)) error
	// Version, read in a decision's transaction, names the connection
	// and is the same as the one read in the decision before on it only
	// when no other connection committed in between; an error when the
	// database cannot tell.
	Version(ctx context.Context, tx *sql.Tx) (conn, data int64, err error)
}

// logWrites counts the writes to a log this process made other than
// through a mirror's own decision (a call given back, a refill) and every
// mirror's decisions that wrote: a mirror that finds it moved by another
// than itself reads its pools again.
var logWrites atomic.Int64

// logMirror is one limiter's mirror of its quota key's log.
type logMirror struct {
	w LogWindow

	mu      sync.Mutex
	valid   bool
	version logVersion
	writes  int64 // logWrites after its last decision
	pools   map[string]*poolMirror
}

// poolMirror is every entry of a pool's log after from, in the order of
// their ids.
type poolMirror struct {
	from    int64
	entries []logEntry
}

// logView is one decision's view of the mirror: what it read and what it
// wrote, taken into the mirror only when the decision commits.
type logView struct {
	m       *logMirror
	ok      bool
	version logVersion
	writes  int64
	pools   map[string]*poolView
}

// poolView is a pool as a decision sees it: the mirror's entries (or
// those it read), less those it trimmed, and those it added.
type poolView struct {
	base    *poolMirror
	trimmed int64
	adds    []logEntry
}

// begin is the view of a decision in tx: usable when the mirror is valid
// for the version tx reads (nothing written since but through it),
// else one that reads each pool afresh; nil without a mirror.
func (m *logMirror) begin(ctx context.Context, tx *sql.Tx) *logView {
	if m == nil {
		return nil
	}
	v := &logView{m: m, pools: map[string]*poolView{}}
	conn, data, err := m.w.Version(ctx, tx)
	version := logVersion{Conn: conn, Data: data}
	if err != nil {
		return v // not usable: every read goes to the database
	}
	v.ok, v.version = true, version
	m.mu.Lock()
	defer m.mu.Unlock()
	v.writes = logWrites.Load()
	if m.valid && m.version == version && m.writes == v.writes {
		for name, p := range m.pools {
			v.pools[name] = &poolView{base: p, trimmed: p.from}
		}
	}
	return v
}

// usable reports whether the view answers for the log: nothing else in
// the process wrote it since the view began.
func (v *logView) usable() bool {
	return v != nil && v.ok && logWrites.Load() == v.writes
}

// pool is the view of pool with every entry after keep, read from the
// database when the mirror does not hold them all.
func (v *logView) pool(ctx context.Context, tx *sql.Tx, key, pool string, keep int64) (*poolView, error) {
	p := v.pools[pool]
	if p != nil && p.base.from <= keep {
		return p, nil
	}
	var entries []logEntry
	err := v.m.w.Window(ctx, tx, key, pool, keep, func(id string, at, units int64) {
		entries = append(entries, logEntry{ID: id, At: at, Units: units})
	})
	if err != nil {
		return nil, err
	}
	p = &poolView{base: &poolMirror{from: keep, entries: summed(0, entries)}, trimmed: keep}
	v.pools[pool] = p
	return p, nil
}

// trim is the database's Trim at keep, as the view sees it.
func (p *poolView) trim(keep int64) { p.trimmed = max(p.trimmed, keep) }

// add is an entry the database's Add logged.
func (p *poolView) add(e logEntry) { p.adds = append(p.adds, e) }

// each calls fn with every entry of the view after after, in the order of
// their ids, until fn says stop.
func (p *poolView) each(after int64, fn func(e logEntry) bool) {
	after = max(after, p.trimmed)
	adds := slices.Clone(p.adds)
	slices.SortFunc(adds, entryOrder)
	base := p.base.entries
	i, j := p.start(after), 0
	for i < len(base) || j < len(adds) {
		var e logEntry
		if j >= len(adds) || i < len(base) && entryOrder(base[i], adds[j]) <= 0 {
			e, i = base[i], i+1
		} else {
			e, j = adds[j], j+1
		}
		if e.At > after && !fn(e) {
			return
		}
	}
}

// entryOrder orders entries as the limiter's ids run: time, then length of
// the id, then the id (Reaching's ORDER BY).
func entryOrder(a, b logEntry) int {
	if a.At != b.At {
		if a.At < b.At {
			return -1
		}
		return 1
	}
	if len(a.ID) != len(b.ID) {
		return len(a.ID) - len(b.ID)
	}
	return strings.Compare(a.ID, b.ID)
}

// used is LogRows.Used over the view (without the ledger). A view that
// added nothing yet, as at a decision's load, sums its entries by their
// sums.
func (p *poolView) used(horizon, dayStart, keep int64) (used, usedDay int64) {
	if len(p.adds) > 0 {
		return p.walked(horizon, dayStart, keep)
	}
	after := max(keep, p.trimmed)
	used = p.after(max(after, horizon))
	if dayStart > 0 {
		usedDay = p.after(max(after, dayStart-1))
	}
	return used, usedDay
}

// after is the units of the base's entries after t.
func (p *poolView) after(t int64) int64 {
	es := p.base.entries
	i := p.start(t)
	if i == len(es) {
		return 0
	}
	before := es[0].sum - es[0].Units
	if i > 0 {
		before = es[i-1].sum
	}
	return es[len(es)-1].sum - before
}

// walked is used by a walk of every entry of the view.
func (p *poolView) walked(horizon, dayStart, keep int64) (used, usedDay int64) {
	p.each(keep, func(e logEntry) bool {
		if e.At > horizon {
			used += e.Units
		}
		if dayStart > 0 && e.At >= dayStart {
			usedDay += e.Units
		}
		return true
	})
	return used, usedDay
}

// reaching is LogRows.Reaching over the view (without the ledger).
func (p *poolView) reaching(horizon, need int64) (at int64) {
	var run int64
	p.each(horizon, func(e logEntry) bool {
		run += e.Units
		if run >= need {
			at = e.At
			return false
		}
		return true
	})
	return at
}

// seal, before the decision's transaction commits, takes the mirror out of
// use until commit: a decision that begins once the database is free, the
// moment the commit returns, must not read the mirror without this one's
// entries. It reports whether no other writer in the process wrote the
// log since the view began, which commit needs.
func (v *logView) seal() bool {
	if v == nil {
		return false
	}
	m := v.m
	m.mu.Lock()
	defer m.mu.Unlock()
	m.valid = false
	return v.ok && logWrites.CompareAndSwap(v.writes, v.writes+1)
}

// commit takes the committed decision's view into the mirror: its pools
// as it left them, valid for its version, when it was sealed and nothing
// else in the process wrote the log since.
func (v *logView) commit(sealed bool) {
	if v == nil {
		return
	}
	m := v.m
	m.mu.Lock()
	defer m.mu.Unlock()
	if !sealed || logWrites.Load() != v.writes+1 {
		m.valid, m.pools = false, nil
		return
	}
	pools := map[string]*poolMirror{}
	for name, p := range v.pools {
		pools[name] = p.left()
	}
	m.valid, m.version, m.writes, m.pools = true, v.version, v.writes+1, pools
}

// left is the pool as the view leaves it: the base's entries after what
// it trimmed, then those it added (appended when they come after the
// base's last, as a decision's own call does; merged otherwise).
func (p *poolView) left() *poolMirror {
	base := p.base.entries
	if len(p.adds) == 0 && p.trimmed == p.base.from {
		return p.base
	}
	i := p.start(p.trimmed)
	adds := slices.Clone(p.adds)
	slices.SortFunc(adds, entryOrder)
	if len(adds) == 0 || i == len(base) || entryOrder(base[len(base)-1], adds[0]) < 0 {
		var before int64
		if i < len(base) {
			before = base[len(base)-1].sum
		}
		return &poolMirror{from: p.trimmed, entries: append(base[i:], summed(before, adds)...)}
	}
	next := &poolMirror{from: p.trimmed}
	p.each(p.trimmed, func(e logEntry) bool {
		next.entries = append(next.entries, e)
		return true
	})
	next.entries = summed(0, next.entries)
	return next
}

// start is the index of the base's first entry after after.
func (p *poolView) start(after int64) int {
	i, _ := slices.BinarySearchFunc(p.base.entries, after, func(e logEntry, t int64) int {
		if e.At <= t {
			return -1
		}
		return 1
	})
	return i
}

package pace

import (
	"time"

	"github.com/ingestworks/ingest"
)

// edge is how far the limiter's clock (Redis's, or a host's) may be from
// this worker's while a spend of its own is at the window's start: a
// spend the limiter still counts for that long after this worker's window
// let it go is still this worker's. It also bounds when a spend's record
// may be written after the limiter counted it.
const edge = time.Minute

// sight is what a plan saw of a pool: the limiter's use at a moment, and
// what this worker's ledger held of it then (own), of which near is what
// it held within an edge of that moment.
type sight struct {
	at        time.Time
	used      int64
	own, near int64
}

// ownAt is what of mine the limiter may count at at (the window's start
// an edge early; every spend since, even one after at), and near, the part
// of it within an edge of at.
func ownAt(mine []Spent, window time.Duration, at time.Time) (own, near int64) {
	for _, s := range mine {
		if s.At.After(at.Add(-window - edge)) {
			own += s.Units
		}
		if s.At.After(at.Add(-edge)) && !s.At.After(at.Add(edge)) {
			near += s.Units
		}
	}
	return own, near
}

// others is what the pool shows spent beyond this worker's own (mine: its
// ledger's spends, as read after st), confirmed by the plan before (prev):
// a call the limiter counted is written to the ledger just after, so the
// excess of one reading may be this worker's own calls in flight (a
// tracking pass, a refresh, a backfill on this database). Only an excess
// the pool still showed at the plan before, once the ledger has the calls
// that were in flight then, is another worker's. seen is this reading,
// for the next; unsure says that an excess waits for that confirmation.
func others(st ingest.PoolState, window time.Duration, now time.Time, mine []Spent, prev *sight) (units int64, seen sight, unsure bool) {
	own, near := ownAt(mine, window, now)
	seen = sight{at: now, used: st.Used, own: own, near: near}
	excess := st.Used - own
	if excess <= 0 {
		return 0, seen, false
	}
	// The ledger read now holds what was in flight at prev only while it
	// reaches back that far.
	if prev == nil || now.Sub(prev.at) > window-2*edge || prev.at.After(now) {
		return 0, seen, true
	}
	_, nearNow := ownAt(mine, window, prev.at)
	if was := prev.used - prev.own - (nearNow - prev.near); was <= 0 {
		return 0, seen, true
	}
	return excess, seen, false
}

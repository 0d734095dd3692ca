package sim

import (
	"context"
	"fmt"
	"time"

	"github.com/ingestworks/ingest/store"
)

// Unknown is a decision of unknown outcome a database's ledger keeps: one
// the worker gave up on, Redis's answer never come.
type Unknown struct {
	Op   string
	At   time.Time
	Peer bool // in the other worker's database (readPeer)
}

// readUnknowns is the decisions of unknown outcome db's ledger keeps.
func readUnknowns(ctx context.Context, db *store.DB, peer bool) ([]Unknown, error) {
	rows, err := db.Reader().QueryContext(ctx, `SELECT op, at_ms FROM ledger_unknown ORDER BY at_ms`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []Unknown
	for rows.Next() {
		u := Unknown{Peer: peer}
		var at int64
		if err := rows.Scan(&u.Op, &at); err != nil {
			return nil, err
		}
		u.At = time.UnixMilli(at)
		out = append(out, u)
	}
	return out, rows.Err()
}

// checkUnknownsSettled: a decision the worker gave up on waits in its
// database's ledger until Redis answers again; then the worker asks Redis
// for it, and gives back what Redis admitted for a call never made
// (docs/explanation/quota.md: a decision of unknown outcome). A
// worker that stops before Redis answers leaves it to the next on the
// database. So none is left at the end in a database whose ledger holds a
// call Redis admitted (metered, not given back) recorded after the call
// the decision went ahead as unmetered (the first recorded within a second
// of it): Redis answered a worker of that database after it.
func checkUnknownsSettled(h *History) []string {
	var out []string
	for _, u := range h.Unknowns {
		went := int64(-1) // the unmetered call it went ahead as
		for _, e := range h.Ledger {
			if e.Peer == u.Peer && e.Unmetered && !e.At.Before(u.At) && e.At.Sub(u.At) <= time.Second && (went < 0 || e.Seq < went) {
				went = e.Seq
			}
		}
		if went < 0 {
			continue
		}
		for _, e := range h.Ledger {
			if e.Peer == u.Peer && !e.Unmetered && !e.GivenBack && e.Seq > went {
				out = append(out, fmt.Sprintf("%s kept a decision of %s of unknown outcome from %s to the end, though Redis admitted a call of it after (at %s): once Redis answers, the worker settles it",
					database(u.Peer), u.Op, u.At.UTC().Format(time.RFC3339Nano), e.At.UTC().Format(time.RFC3339Nano)))
				break
			}
		}
	}
	return out
}

// database names the database a row is in.
func database(peer bool) string {
	if peer {
		return "the other worker's database"
	}
	return "the daemon's database"
}

package sim

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/ingestworks/ingest/store"
)

// checkOrphans: no row the database keeps at the end points at a parent
// row that is gone (docs/data.md: a run goes with all its entries, a
// video with every row pointing at it). The writer enforces the
// schema's foreign keys on every connection, so a delete in the wrong
// order is refused where it is made; a connection opened without them,
// or a prune or a terms' delete that removes a parent and keeps its
// children, leaves rows no read can place, and only this finds them.
func checkOrphans(h *History) []string {
	if len(h.Orphans) == 0 {
		return nil
	}
	return []string{fmt.Sprintf("the database keeps rows whose parent is gone: %s", strings.Join(h.Orphans, "; "))}
}

// readOrphans is SQLite's foreign_key_check of the database, counted by
// child table and parent; it reads whatever the connection's own
// foreign_keys setting is.
func readOrphans(ctx context.Context, db *store.DB) ([]string, error) {
	rows, err := db.Reader().QueryContext(ctx, `PRAGMA foreign_key_check`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	n := map[string]int{}
	for rows.Next() {
		var table, parent string
		var rowid, fk any
		if err := rows.Scan(&table, &rowid, &parent, &fk); err != nil {
			return nil, err
		}
		n[table+" -> "+parent]++
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	out := make([]string, 0, len(n))
	for k, c := range n {
		out = append(out, fmt.Sprintf("%s: %d", k, c))
	}
	sort.Strings(out)
	return out, nil
}

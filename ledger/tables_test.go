package ledger

import (
	"testing"

	"github.com/ingestworks/ingest/internal/rig/storetest"
)

// On a migrated SQLite database, the tables a limiter is built on hold
// every statement prepared: none falls back to its text, which SQLite would
// parse on each decision.
func TestTablesPrepareEveryStatementOnSQLite(t *testing.T) {
	t.Parallel()
	tb := New(storetest.Open(t)).Tables()
	for _, q := range tableSQL {
		if tb.prep.m[q] == nil {
			t.Errorf("not prepared: %s", q)
		}
	}
}

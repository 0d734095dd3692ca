package retention

import (
	"testing"
	"time"

	"github.com/ingestworks/ingest"
)

// A prune job's cuts reach each of the prune's own, one for one.
func TestForTakesEachCut(t *testing.T) {
	at := time.Date(2026, 11, 28, 0, 0, 0, 0, time.UTC)
	day := func(n int) time.Time { return at.AddDate(0, 0, -n) }
	got := For(ingest.Cuts{Stats: day(1), Videos: day(2), Orphans: day(3), Search: day(4), Categories: day(5), Gone: day(6), Ledger: day(7)})
	want := Retention{Before: day(1), VideosBefore: day(2), OrphansBefore: day(3), SearchBefore: day(4),
		CategoriesBefore: day(5), GoneBefore: day(6), LedgerBefore: day(7)}
	for _, c := range []struct {
		name      string
		got, want time.Time
	}{
		{"stats", got.Before, want.Before}, {"videos", got.VideosBefore, want.VideosBefore},
		{"orphans", got.OrphansBefore, want.OrphansBefore}, {"search", got.SearchBefore, want.SearchBefore},
		{"categories", got.CategoriesBefore, want.CategoriesBefore}, {"gone", got.GoneBefore, want.GoneBefore},
		{"ledger", got.LedgerBefore, want.LedgerBefore},
	} {
		if !c.got.Equal(c.want) {
			t.Errorf("For: %s cut = %v, want %v", c.name, c.got, c.want)
		}
	}
}

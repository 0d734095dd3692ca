package report

import (
	"fmt"
	"io"
	"time"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/store"
)

// PruneCounts are the rows a prune deletes, as prune --json prints them
// (--dry-run's the same: it is the prune, kept from the database).
type PruneCounts struct {
	Runs       int64 `json:"runs"`
	Entries    int64 `json:"entries"`
	Stats      int64 `json:"stats"`
	Videos     int64 `json:"videos"`
	Search     int64 `json:"backfill_results"`
	Categories int64 `json:"categories"`
}

// PrunedJSON is prune --json: what a prune deleted, and the database after.
type PrunedJSON struct {
	PruneCounts
	Ledger     int64 `json:"ledger"`
	FreedBytes int64 `json:"freed_bytes"`
	// FreeKeptBytes: free pages the prune left inside the file for new rows.
	FreeKeptBytes int64      `json:"free_kept_bytes"`
	Bytes         int64      `json:"database_bytes"`
	OldestRun     *time.Time `json:"oldest_run"`
}

// PruneJSON is p, and the database's size s after it, as prune --json
// prints them.
func PruneJSON(p ingest.Pruned, s store.Size) PrunedJSON {
	out := PrunedJSON{PruneCounts: PruneCounts{Runs: p.Runs, Entries: p.Entries, Stats: p.Stats, Videos: p.Videos,
		Search: p.Search, Categories: p.Categories}, Ledger: p.Ledger, FreedBytes: p.Freed, FreeKeptBytes: p.FreeKept, Bytes: s.Bytes}
	if !s.OldestRun.IsZero() {
		out.OldestRun = &s.OldestRun
	}
	return out
}

// Pruned prints what a prune deleted, and the database after it.
func Pruned(out io.Writer, p ingest.Pruned, size store.Size) {
	kept := "" // PostgreSQL keeps its free space in its own way
	if p.FreeKept > 0 {
		kept = fmt.Sprintf(", %s kept free inside the file for new rows", megabytes(p.FreeKept))
	}
	fmt.Fprintf(out, "pruned %d runs, %d chart entries, %d stats, %d videos, %d backfill results, %d category names, %d ledger rows; freed %s%s\n",
		p.Runs, p.Entries, p.Stats, p.Videos, p.Search, p.Categories, p.Ledger, megabytes(p.Freed), kept)
	fmt.Fprintf(out, "database %s, oldest run %s\n", megabytes(size.Bytes), oldestText(size.OldestRun))
}

func megabytes(n int64) string { return fmt.Sprintf("%.1f MB", float64(n)/1e6) }

func oldestText(t time.Time) string {
	if t.IsZero() {
		return "none"
	}
	return t.UTC().Format(time.RFC3339)
}

package ingest

import "time"

// Cuts are the times before which a prune deletes each kind of data; a
// zero time deletes nothing of its kind. The prune job sets them from the
// standing and --keep; retention deletes by them.
type Cuts struct {
	// Stats: the finished chart runs started before it with their entries,
	// the tracked counts read before it, their daily rollup.
	Stats time.Time
	// Videos: the videos whose text was fetched before it, with every row
	// pointing at them. Orphans: those fetched before it that nothing kept
	// points at.
	Videos, Orphans time.Time
	// Search, Categories, Gone: backfill results, category names and the
	// tombstones of videos gone upstream.
	Search, Categories, Gone time.Time
	// Ledger: the quota ledger's rows (our own record, kept for the
	// quota's span whatever else goes).
	Ledger time.Time
}

// Pruned counts what one prune removed.
type Pruned struct {
	Runs, Entries, Stats, Videos, Ledger int64
	// Search and Categories are the backfill results and category names
	// the terms' cuts removed.
	Search, Categories int64
	// Freed is how many bytes the incremental vacuum gave back to the file
	// system (0 on a file made before schema 7: see store.Size); FreeKept,
	// how many bytes of free pages it left inside the file for new rows (on
	// a file that can shrink, what a day of the rows it deleted took).
	Freed, FreeKept int64
}

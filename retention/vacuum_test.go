package retention

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/store"
)

// TestPruneKeepsADayOfFreePages prunes the oldest of ten daily runs (the smallest), as a
// daemon's daily prune does, and checks that the freed pages stay in the
// file for the next day's rows: the vacuum moves no page to shrink the
// file (it writes no WAL frame). Pruning eight of the nine days left then
// gives back all but a day's worth of what they took.
func TestPruneKeepsADayOfFreePages(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := openTest(t) // the file's free pages: SQLite only
	// Days from 00:00: statistics go in whole days.
	start := t0.Truncate(24 * time.Hour).Add(-10 * 24 * time.Hour)
	for d := range 10 {
		at := start.Add(time.Duration(d) * 24 * time.Hour)
		var videos []ingest.Video
		for i := range min(40, 10+30*d) { // the oldest day, which goes first, is smaller
			v := vid(fmt.Sprintf("d%02dv%02d", d, i), fmt.Sprint("a title ", d, i))
			v.Description = strings.Repeat(fmt.Sprint("words of day ", d, " video ", i, " "), 100)
			videos = append(videos, v)
		}
		finished(t, db, "US", at, videos...)
	}
	// The file starts with no free page: what is free afterwards, the
	// prune freed.
	if _, err := db.Writer().Exec(`PRAGMA incremental_vacuum; PRAGMA wal_checkpoint(TRUNCATE)`); err != nil {
		t.Fatal(err)
	}
	size := func() store.Size {
		s, err := db.Size(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	inUse := func(s store.Size) int64 { return s.Bytes - s.FreeBytes }

	before := size()
	if !before.Incremental || before.FreeBytes != 0 {
		t.Fatalf("%+v: want a file that can shrink, with no free page", before)
	}
	pr := small(db)
	// The vacuum's pages: the WAL frames written between the step before
	// it and its end, counting those each checkpoint took out of the WAL.
	var written, vacuumed int64
	pr.beforeCheckpoint = func() { written += walSize(t, db) }
	pr.afterStep = func(step string) {
		switch step {
		case "ledger":
			vacuumed = -(written + walSize(t, db))
		case "vacuum":
			vacuumed += written + walSize(t, db)
		}
	}
	got, err := pr.prune(ctx, Retention{Before: start.Add(24 * time.Hour), Batch: 1000})
	if err != nil {
		t.Fatal(err)
	}
	after := size()
	freed := inUse(before) - inUse(after)
	if got.Runs != 1 || freed <= 0 {
		t.Fatalf("pruned %+v, %d bytes out of use: want the oldest day's run gone and its pages free", got, freed)
	}
	if got.Freed != 0 || after.Bytes < before.Bytes || got.FreeKept != after.FreeBytes || after.FreeBytes < freed {
		t.Errorf("a day pruned: %d bytes given back, file %d then %d bytes, %d free kept (%d free): want no page moved, the %d bytes freed kept free",
			got.Freed, before.Bytes, after.Bytes, got.FreeKept, after.FreeBytes, freed)
	}
	if vacuumed != 0 {
		t.Errorf("a day pruned: the vacuum wrote %d bytes of pages for %d freed: want none", vacuumed, freed)
	}
	integrityCheck(t, db)

	before = after
	got, err = pr.prune(ctx, Retention{Before: start.Add(9 * 24 * time.Hour), Batch: 1000})
	if err != nil {
		t.Fatal(err)
	}
	after = size()
	if got.Runs != 8 || got.Freed <= 0 || after.Bytes >= before.Bytes {
		t.Errorf("eight days pruned %+v, file %d then %d bytes: want it smaller", got, before.Bytes, after.Bytes)
	}
	// A day's worth: an eighth of what the eight days took.
	if freed = inUse(before) - inUse(after); got.FreeKept != after.FreeBytes || got.FreeKept > freed/8 {
		t.Errorf("eight days pruned: %d bytes of free pages kept (%d free), %d freed: want an eighth at most",
			got.FreeKept, after.FreeBytes, freed)
	}
	integrityCheck(t, db)
}

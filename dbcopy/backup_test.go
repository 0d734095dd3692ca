package dbcopy

import (
	"context"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/store"
)

// writeRuns stores a run of two videos in JP, one after another, until
// stop is closed; started is closed after the third, and wrote is told how
// many runs it stored.
func writeRuns(t *testing.T, db *store.DB, stop, started chan struct{}, wrote chan int) {
	ctx := context.Background()
	n := 0
	defer func() { wrote <- n }()
	for {
		select {
		case <-stop:
			return
		default:
		}
		at := t0.Add(time.Duration(n) * time.Minute)
		id, err := db.StartRun(ctx, "JP", "", ingest.Trending, at)
		if err != nil {
			t.Error(err)
			return
		}
		p := ingest.Page{Kind: ingest.Trending, Region: "JP", Number: 1, Fetched: at,
			Videos: []ingest.Video{vid("live"+strconv.Itoa(n), "live one"), vid("live", "always there")}}
		if err := db.SavePage(ctx, id, p); err != nil {
			t.Error(err)
			return
		}
		if n++; n == 3 {
			close(started)
		}
	}
}

// A backup taken while a worker writes pages opens, passes quick_check,
// and holds every row of every table the source held in the read it was
// made of, and no page in part.
func TestBackupOfALiveFileHoldsEveryRowTheSourceHeld(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	src := open(t, filepath.Join(dir, "src.db"))
	fillEveryTable(t, src)
	stop, started, wrote := make(chan struct{}), make(chan struct{}), make(chan int)
	go writeRuns(t, src, stop, started, wrote)
	select {
	case <-started:
	case n := <-wrote:
		t.Fatalf("the worker stopped after %d runs", n)
	}
	into := filepath.Join(dir, "backup.db")
	sums, err := Backup(ctx, src, into)
	close(stop)
	n := <-wrote
	if err != nil {
		t.Fatalf("backup of a file being written: %v", err)
	}
	b, err := store.OpenExisting(ctx, into)
	if err != nil {
		t.Fatalf("open the backup: %v", err)
	}
	defer b.Close()
	differ, err := Verify(ctx, b, sums)
	if err != nil {
		t.Fatalf("verify the backup: %v", err)
	}
	for _, d := range differ {
		t.Errorf("the backup's %s: %+v, the source's in the backup's read: %+v", d.Table, d.Target, d.Source)
	}
	for _, s := range sums {
		if s.Source.Rows == 0 && s.Table != "ledger_given_back" && s.Table != "ledger_unknown" {
			t.Errorf("the source's %s summed no rows: the sums read nothing", s.Table)
		}
	}
	runs := count(t, b, `SELECT count(*) FROM runs WHERE region = 'JP'`)
	entries := count(t, b, `SELECT count(*) FROM trending_entries WHERE region = 'JP'`)
	if runs < 3 || runs > n || entries != 2*runs && entries != 2*runs-2 {
		t.Errorf("the backup of a live file holds %d runs with %d entries (the worker wrote %d runs of 2, 3 before the backup): a page in part or one missing",
			runs, entries, n)
	}
}

// A backup that does not hold what the source held is told, table by
// table.
func TestVerifyFindsARowTheBackupLacks(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	src := open(t, filepath.Join(dir, "src.db"))
	fillEveryTable(t, src)
	into := filepath.Join(dir, "backup.db")
	sums, err := Backup(ctx, src, into)
	if err != nil {
		t.Fatal(err)
	}
	b := open(t, into)
	if _, err := b.Writer().ExecContext(ctx, `DELETE FROM video_regions WHERE (vid, region) = (SELECT vid, region FROM video_regions ORDER BY vid, region LIMIT 1)`); err != nil {
		t.Fatal(err)
	}
	differ, err := Verify(ctx, b, sums)
	if err != nil {
		t.Fatal(err)
	}
	if len(differ) != 1 || differ[0].Table != "video_regions" || differ[0].Target.Rows != differ[0].Source.Rows-1 {
		t.Errorf("a backup lacking a row of video_regions: Verify says %+v, want video_regions one row short", differ)
	}
}

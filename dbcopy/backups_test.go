package dbcopy

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"testing/synctest"
	"time"

	"github.com/ingestworks/ingest/clock"
	"github.com/ingestworks/ingest/internal/rig/storetest"
	"github.com/ingestworks/ingest/store"
)

// observed is what the schedule told of its backups.
type observed struct {
	took   []time.Time
	failed int
}

func (o *observed) Took(at time.Time) { o.took = append(o.took, at) }
func (o *observed) Failed()           { o.failed++ }

// The daemon's schedule takes a backup every period, counted from the
// newest one the directory holds (a restart does not take one early), and
// keeps the newest --backup-keep of them, the older ones removed, and what
// a killed one left; each is told to the observer (run's /metrics).
func TestBackupsAreTakenEveryPeriodAndTheNewestKept(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		dir := t.TempDir()
		db := storetest.Open(t)
		start := time.Now()
		old := filepath.Join(dir, backupPrefix+start.Add(-30*time.Minute).UTC().Format(backupStamp)+backupSuffix)
		if err := os.WriteFile(old, []byte("an earlier daemon's"), 0o644); err != nil {
			t.Fatal(err)
		}
		// What a killed daemon's backup left, and one a live process
		// (init) still writes.
		dead := filepath.Join(dir, ".ingest-19991231T220000Z.db.999999999.0")
		live := filepath.Join(dir, ".ingest-19991231T220000Z.db.1.0")
		for _, f := range []string{dead, live} {
			if err := os.WriteFile(f, []byte("part"), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		m := &observed{}
		b := &Schedule{Backups: Backups{Dir: dir, Every: time.Hour, Keep: 2}, DB: db, Open: store.OpenExisting, Observe: m,
			Clock: clock.System, Logger: slog.New(slog.DiscardHandler)}
		stop, done := make(chan struct{}), make(chan struct{})
		go func() {
			defer close(done)
			b.Run(context.Background(), stop)
		}()
		time.Sleep(3*time.Hour + time.Minute)
		synctest.Wait()
		close(stop)
		<-done
		if _, err := os.Stat(dead); err == nil {
			t.Errorf("the part a killed backup left is still there")
		}
		if _, err := os.Stat(live); err != nil {
			t.Errorf("the part a live process writes was removed: %v", err)
		}
		names, times := backups(dir)
		var want []time.Time
		for _, at := range []time.Duration{90 * time.Minute, 150 * time.Minute} {
			want = append(want, start.Add(at).Truncate(time.Second))
		}
		if !slices.EqualFunc(times, want, time.Time.Equal) {
			t.Errorf("backups at %v, want %v: one every hour from the newest the directory held, the newest 2 kept", times, want)
		}
		for _, n := range names {
			opened, err := store.OpenExisting(context.Background(), n)
			if err != nil {
				t.Errorf("a scheduled backup does not open: %v", err)
				continue
			}
			opened.Close()
		}
		if n := len(m.took); n == 0 || !m.took[n-1].Equal(start.Add(150*time.Minute)) {
			t.Errorf("told of backups at %v, want the newest at %v: 31 minutes before the end", m.took, start.Add(150*time.Minute))
		}
		if m.failed != 0 {
			t.Errorf("told of %d failures, want none", m.failed)
		}
	})
}

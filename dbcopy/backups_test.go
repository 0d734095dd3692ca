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

	"github.com/prometheus/client_golang/prometheus"

	"github.com/ingestworks/ingest/clock"
	"github.com/ingestworks/ingest/internal/storetest"
	"github.com/ingestworks/ingest/metrics"
	"github.com/ingestworks/ingest/store"
)

// gauge is the value of the series name among cs.
func gauge(t *testing.T, name string, cs ...prometheus.Collector) float64 {
	t.Helper()
	reg := prometheus.NewRegistry()
	reg.MustRegister(cs...)
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() == name {
			m := f.GetMetric()[0]
			if m.GetGauge() != nil {
				return m.GetGauge().GetValue()
			}
			return m.GetCounter().GetValue()
		}
	}
	t.Fatalf("no series %s", name)
	return 0
}

// The daemon's schedule takes a backup every period, counted from the
// newest one the directory holds (a restart does not take one early), and
// keeps the newest --backup-keep of them, the older ones removed, and what
// a killed one left; the newest one's age is on /metrics.
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
		m := metrics.NewBackups(clock.System, time.Hour)
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
		if age := gauge(t, "ingest_backup_age_seconds", m.Collectors()...); age != 31*60 {
			t.Errorf("ingest_backup_age_seconds %v, want 1860: 31 minutes since the newest", age)
		}
		if n := gauge(t, "ingest_backup_failures_total", m.Collectors()...); n != 0 {
			t.Errorf("ingest_backup_failures_total %v, want 0", n)
		}
	})
}

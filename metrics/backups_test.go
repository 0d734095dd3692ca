package metrics

import (
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/ingestworks/ingest/internal/rig/clocktest"
)

// series is the value of the series name among cs.
func series(t *testing.T, name string, cs ...prometheus.Collector) float64 {
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

// TestBackupsSayTheNewestsAgeAndTheFailures: the age of the newest
// scheduled backup on the house clock, and the failures counted.
func TestBackupsSayTheNewestsAgeAndTheFailures(t *testing.T) {
	c := clocktest.NewFake(time.Date(2026, 11, 2, 9, 0, 0, 0, time.UTC))
	b := NewBackups(c, time.Hour, nil)
	b.Took(c.Now().Add(-30 * time.Minute))
	c.Advance(time.Minute)
	b.Failed()
	if age := series(t, "ingest_backup_age_seconds", b.Collectors()...); age != 31*60 {
		t.Errorf("ingest_backup_age_seconds %v, want 1860: 31 minutes since the newest", age)
	}
	if n := series(t, "ingest_backup_failures_total", b.Collectors()...); n != 1 {
		t.Errorf("ingest_backup_failures_total %v, want 1", n)
	}
}

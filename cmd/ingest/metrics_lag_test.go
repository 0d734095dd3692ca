package main

import (
	"testing"
	"time"

	"github.com/ingestworks/ingest/jobs"
)

// ingest_schedule_lag_seconds counts a pass its slot started, from that
// slot, and leaves a catch-up at start (no slot) out.
func TestScheduleLagLeavesCatchUpsOut(t *testing.T) {
	m := newMetrics()
	us := (&jobs.Pass{Region: "US"}).Entry()
	m.observe(us, jobs.Ended{}, time.Second, time.Time{})
	if got, ok := lagOf(t, m, "US"); ok {
		t.Errorf("a catch-up set US's lag to %.1f s; want it left out", got)
	}
	m.observe(us, jobs.Ended{}, time.Second, time.Now().Add(-3*time.Second))
	if got, ok := lagOf(t, m, "US"); !ok || got < 2 {
		t.Errorf("a pass started 2 s after its slot: lag %.1f s (set: %v), want at least 2", got, ok)
	}
}

func lagOf(t *testing.T, m *metrics, region string) (float64, bool) {
	t.Helper()
	families, err := m.reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() != "ingest_schedule_lag_seconds" {
			continue
		}
		for _, s := range f.GetMetric() {
			for _, l := range s.GetLabel() {
				if l.GetName() == "region" && l.GetValue() == region {
					return s.GetGauge().GetValue(), true
				}
			}
		}
	}
	return 0, false
}

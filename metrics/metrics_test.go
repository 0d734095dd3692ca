package metrics

import (
	"context"
	"testing"
	"time"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/clock"
	"github.com/ingestworks/ingest/jobs"
)

// ingest_schedule_lag_seconds counts a pass its slot started, from that
// slot, and leaves a catch-up at start (no slot) out.
func TestScheduleLagLeavesCatchUpsOut(t *testing.T) {
	m := New(Build{}, clock.System)
	m.Pass("US", ingest.StatusCompleted, time.Second, time.Time{})
	if got, ok := gauge(t, m, "ingest_schedule_lag_seconds", "US"); ok {
		t.Errorf("a catch-up set US's lag to %.1f s; want it left out", got)
	}
	m.Pass("US", ingest.StatusCompleted, time.Second, time.Now().Add(-3*time.Second))
	if got, ok := gauge(t, m, "ingest_schedule_lag_seconds", "US"); !ok || got < 2 {
		t.Errorf("a pass started 2 s after its slot: lag %.1f s (set: %v), want at least 2", got, ok)
	}
}

// A region fails repeatedly after FailingAfter failed passes in a row; any
// pass that does not fail starts the count over.
func TestFailing(t *testing.T) {
	m := New(Build{}, clock.System)
	for range FailingAfter - 1 {
		m.Pass("GB", ingest.StatusFailed, time.Second, time.Time{})
	}
	if f := m.Failing(); len(f) != 0 {
		t.Errorf("after %d failures: failing %v, want none", FailingAfter-1, f)
	}
	m.Pass("GB", ingest.StatusFailed, time.Second, time.Time{})
	if f := m.Failing(); len(f) != 1 || f[0] != "GB" {
		t.Errorf("after %d failures: failing %v, want [GB]", FailingAfter, f)
	}
	if got, _ := gauge(t, m, "ingest_region_consecutive_failures", "GB"); got != FailingAfter {
		t.Errorf("consecutive failures %v, want %d", got, FailingAfter)
	}
	m.Pass("GB", ingest.StatusStopped, time.Second, time.Time{})
	if f := m.Failing(); len(f) != 0 {
		t.Errorf("after a stopped pass: failing %v, want none", f)
	}
}

// The retries of a slot the limiter could not decide are that slot's
// failure, counted once: an outage of seconds at a slot is not three
// passes failed in a row.
func TestRetriesOfASlotFailItOnce(t *testing.T) {
	m := New(Build{}, clock.System)
	chart := jobs.Entry{Name: "GB", Kind: jobs.KindChart}
	for slot := range 2 {
		for try := range 4 {
			m.Observe(chart, jobs.Ended{RunEnd: ingest.RunEnd{Status: ingest.StatusFailed}, Again: try > 0}, time.Second, time.Time{})
		}
		if got, _ := gauge(t, m, "ingest_region_consecutive_failures", "GB"); got != float64(slot+1) {
			t.Errorf("after %d slots of 4 tries each: consecutive failures %v, want %d", slot+1, got, slot+1)
		}
	}
	m.Observe(chart, jobs.Ended{RunEnd: ingest.RunEnd{Status: ingest.StatusCompleted}, Again: true}, time.Second, time.Time{})
	if got, _ := gauge(t, m, "ingest_region_consecutive_failures", "GB"); got != 0 {
		t.Errorf("after a retry completed: consecutive failures %v, want 0", got)
	}
}

func gauge(t *testing.T, m *Metrics, name, region string) (float64, bool) {
	t.Helper()
	families, err := m.reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() != name {
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

// Observe counts a chart's pass as a pass (its failures count towards
// Failing) and any other entry as a job.
func TestObserve(t *testing.T) {
	m := New(Build{}, clock.System)
	failed := jobs.Ended{RunEnd: ingest.RunEnd{Status: ingest.StatusFailed}}
	for range FailingAfter {
		m.Observe(jobs.Entry{Name: "US/10", Kind: jobs.KindCategoryChart}, failed, time.Second, time.Time{})
		m.Observe(jobs.Entry{Name: "tracking", Kind: jobs.KindTracking}, failed, time.Second, time.Time{})
	}
	if f := m.Failing(); len(f) != 1 || f[0] != "US/10" {
		t.Errorf("failing %v, want [US/10]: tracking is a job, not a chart", f)
	}
}

// NoneFailing fails naming the failing regions in order, and passes again
// once they have not.
func TestNoneFailing(t *testing.T) {
	m := New(Build{}, clock.System)
	if err := m.NoneFailing(context.Background()); err != nil {
		t.Fatalf("no passes: %v", err)
	}
	for range FailingAfter {
		m.Pass("US", ingest.StatusFailed, time.Second, time.Time{})
		m.Pass("GB", ingest.StatusFailed, time.Second, time.Time{})
	}
	if err := m.NoneFailing(context.Background()); err == nil || err.Error() != "failed 3 passes in a row: GB, US" {
		t.Errorf("err = %v", err)
	}
}

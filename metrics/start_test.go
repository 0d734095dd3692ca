package metrics

import (
	"testing"
	"time"

	"github.com/ingestworks/ingest/internal/rig/clocktest"
)

// The start's series say which step it waits on and since when, on the
// house clock, beside the build's and the process's.
func TestStartSaysItsStep(t *testing.T) {
	c := clocktest.NewFake(time.Date(2026, 11, 28, 6, 0, 0, 0, time.UTC))
	s := NewStart(Build{Version: "test"}, c, "opening")
	c.Advance(40 * time.Second)
	s.Step("reading the region catalogue")
	c.Advance(25 * time.Second)
	families, err := s.reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]float64{}
	steps := map[string]float64{}
	for _, f := range families {
		for _, m := range f.GetMetric() {
			switch f.GetName() {
			case "ingest_start_step_seconds":
				steps[m.GetLabel()[0].GetValue()] = m.GetGauge().GetValue()
			case "ingest_start_seconds", "ingest_build_info":
				got[f.GetName()] = m.GetGauge().GetValue()
			}
		}
		if f.GetName() == "process_start_time_seconds" || f.GetName() == "go_goroutines" {
			got[f.GetName()] = 1
		}
	}
	if len(steps) != 1 || steps["reading the region catalogue"] != 25 {
		t.Errorf("ingest_start_step_seconds %v, want one step, reading the region catalogue, 25 s in", steps)
	}
	if got["ingest_start_seconds"] != 65 || got["ingest_build_info"] != 1 || got["go_goroutines"] != 1 {
		t.Errorf("series %v, want ingest_start_seconds 65, ingest_build_info and the Go runtime's", got)
	}
}

// A start begun again (a daemon that plans again on a catalogue read late)
// counts from then: an alert on a long start does not fire on a daemon
// that ran for hours before.
func TestStartBegunAgainCountsFromThen(t *testing.T) {
	c := clocktest.NewFake(time.Date(2026, 11, 28, 6, 0, 0, 0, time.UTC))
	s := NewStart(Build{Version: "test"}, c, "opening")
	c.Advance(5 * time.Hour)
	s.Again("reading the region catalogue")
	c.Advance(3 * time.Second)
	families, err := s.reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		for _, m := range f.GetMetric() {
			switch name := f.GetName(); name {
			case "ingest_start_seconds", "ingest_start_step_seconds":
				if got := m.GetGauge().GetValue(); got != 3 {
					t.Errorf("%s %v once begun again, want 3", name, got)
				}
			}
		}
	}
	if got := s.Doing(); got != "reading the region catalogue" {
		t.Errorf("step %q once begun again, want reading the region catalogue", got)
	}
}

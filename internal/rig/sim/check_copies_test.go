package sim

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func TestCheckFindsACopyThatSawNoWorkerBesideTheDaemon(t *testing.T) {
	h := history(hourly(24, 1), hourly(24, 60), 1)
	look := Copy{At: t0.Add(copyAfter), Started: t0, Running: true, Workers: 1}
	h.Copies = []Copy{look}
	if f := checkCopiesRefused(h); len(f) != 0 {
		t.Fatalf("the copy saw the daemon: %q", f)
	}
	h.Copies[0].Workers = 0
	f := checkCopiesRefused(h)
	if len(f) != 1 || !strings.Contains(f[0], "db copy at 2026-10-25T00:00:30Z, 30s after the daemon's start, saw no worker writing the database") {
		t.Errorf("the copy saw no worker: %q", f)
	}
	h.Copies[0].Err = errors.New("db copy: source: database is locked")
	if f := checkCopiesRefused(h); len(f) != 1 || !strings.Contains(f[0], "30s after the daemon's start: db copy: source: database is locked") {
		t.Errorf("the copy could not look: %q", f)
	}
	h.Copies[0].Err = nil
	for name, excuse := range map[string]func(*History){
		"stopped while it looked": func(h *History) { h.Copies[0].Running = false },
		"the disk full":           func(h *History) { h.Fulls = []Interval{{t0.Add(-time.Minute), t0.Add(time.Second)}} },
		"a run --once beside it": func(h *History) {
			h.Joins = []Join{{Interval: Interval{t0, t0.Add(time.Hour)}, Region: "BR", Runs: []JoinRun{{Interval: Interval{t0.Add(10 * time.Second), t0.Add(20 * time.Second)}}}}}
		},
	} {
		e := history(hourly(24, 1), hourly(24, 60), 1)
		e.Copies = []Copy{{At: look.At, Started: look.Started, Running: true}}
		excuse(e)
		if f := checkCopiesRefused(e); len(f) != 0 {
			t.Errorf("%s: %q", name, f)
		}
	}
}

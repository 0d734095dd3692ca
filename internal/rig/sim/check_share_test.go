package sim

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestCheckFindsAPeerTheLogNeverSaid(t *testing.T) {
	peerAt := t0.Add(5*time.Hour + 25*time.Minute)
	line := func(at time.Time, workers string) string {
		return "time=" + at.Format(time.RFC3339Nano) + ` level=INFO msg="pace: workers of other databases spend in the pool's window; counting on a share of it" pool=default workers=` + workers + " share=0.5 used=12\n"
	}
	check := func(log string, change func(*History)) []string {
		h := history(nil, nil, 1)
		h.Peers = []Join{{Interval: Interval{peerAt, peerAt.Add(3 * time.Hour)}, Region: "BR", Runs: []JoinRun{{Interval: Interval{peerAt, peerAt.Add(time.Minute)}}}}}
		h.Log = filepath.Join(t.TempDir(), "daemon.log")
		if err := os.WriteFile(h.Log, []byte(log), 0o644); err != nil {
			t.Fatal(err)
		}
		if change != nil {
			change(h)
		}
		return checkShareSaid(h)
	}
	if f := check(line(peerAt.Add(40*time.Minute), "2"), nil); len(f) != 0 {
		t.Fatalf("the log said the peer: %q", f)
	}
	want := "a worker of another database ran its first pass on the key at 2026-10-25T05:25:00Z, and the daemon's log did not say within 1h1m0s that it counts on a share of pool default with 2 workers"
	for name, log := range map[string]string{
		"said nothing":      "",
		"said one worker":   line(peerAt.Add(40*time.Minute), "1"),
		"said it too late":  line(peerAt.Add(2*time.Hour), "2"),
		"said it before it": line(peerAt.Add(-time.Minute), "2"),
	} {
		if f := check(log, nil); len(f) != 1 || !strings.Contains(f[0], want) {
			t.Errorf("%s: %q", name, f)
		}
	}
	for name, excuse := range map[string]func(*History){
		"the daemon down":    func(h *History) { h.Down = []Interval{{peerAt.Add(10 * time.Minute), peerAt.Add(20 * time.Minute)}} },
		"the history ending": func(h *History) { h.End = peerAt.Add(30 * time.Minute) },
		"no peer":            func(h *History) { h.Peers = nil },
	} {
		if f := check("", excuse); len(f) != 0 {
			t.Errorf("%s: %q", name, f)
		}
	}
}

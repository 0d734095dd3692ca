package sim

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ingestworks/ingest"
)

func TestCheckFindsTrackingThatFailedWithTheUpstreamAnswering(t *testing.T) {
	h := history(hourly(24, 1), hourly(24, 60), 1)
	for _, m := range hourly(24, 60) {
		h.Passes = append(h.Passes, Pass{Entry: "track", Status: "completed", Started: t0.Add(time.Duration(m * float64(time.Minute)))})
	}
	if f := Check(h); len(f) != 0 {
		t.Fatalf("tracking completed at every slot: %q", f)
	}
	h.Passes[len(h.Passes)-3].Status = "failed" // 21:00
	if f := Check(h); len(f) != 1 || !strings.Contains(f[0], "track: 1 passes failed with the upstream answering and the disk not full (first at 2026-10-25T21:00:00Z)") {
		t.Errorf("tracking failed at 21:00: %q", f)
	}
	h.Faults = []Fault{{At: t0.Add(21*time.Hour + 30*time.Minute), Calls: 2}}
	if f := Check(h); len(f) != 0 {
		t.Errorf("tracking failed at 21:00, the upstream failing from 21:30, within its slot: %q", f)
	}
}

func TestCheckFindsAPassLoggedCompletedWhoseRunIsNot(t *testing.T) {
	h := history(hourly(3, 1), nil, 1)
	h.Log = filepath.Join(t.TempDir(), "daemon.log")
	var log strings.Builder
	for _, r := range h.Runs {
		fmt.Fprintf(&log, "time=%s level=INFO msg=pass region=US status=completed pages=1 videos=50 units=1 duration=0s\n",
			r.Started.Add(time.Second).UTC().Format(time.RFC3339Nano))
	}
	if err := os.WriteFile(h.Log, []byte(log.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	if f := checkRunsAsLogged(h); len(f) != 0 {
		t.Fatalf("every pass logged completed is a completed run: %q", f)
	}
	h.Runs[0].Status = ingest.StatusFailed // its end never stored, then abandoned
	if f := checkRunsAsLogged(h); len(f) != 1 || f[0] != "US: the log says 3 passes completed, the database holds 2 runs completed" {
		t.Errorf("a pass logged completed whose run failed: %q", f)
	}
	h.Runs = h.Runs[1:] // pruned: its line is older than every run kept
	if f := checkRunsAsLogged(h); len(f) != 0 {
		t.Errorf("a pass logged before the first run kept: %q", f)
	}
}

package sim

import (
	"strings"
	"testing"
	"time"

	"github.com/ingestworks/ingest"
)

func TestCheckFindsACallsBoundSpentBeforeItWasSent(t *testing.T) {
	sent := t0.Add(time.Minute)
	given := func(after time.Duration) *History {
		return &History{Calls: []Call{{Sent: sent, At: sent.Add(after), Worker: WorkerDaemon, Path: "/youtube/v3/i18nRegions", Kind: KindOther, Deadline: true}}}
	}
	if f := checkBoundsKept(given(ingest.Delivery - time.Second)); len(f) != 0 {
		t.Fatalf("given up at its bound, less a decision: %q", f)
	}
	// a clock read of 10 s within the bound, then an answer of 12 s
	f := checkBoundsKept(given(10 * time.Second))
	if len(f) != 1 || !strings.Contains(f[0], "1 calls were given up at their deadline sooner than the delivery bound (20s) less the limiter's decision after they reached the upstream, the bound spent before they were sent: /youtube/v3/i18nRegions by the daemon at 2026-10-25T00:01:00Z, 10s after it reached the upstream") {
		t.Errorf("a bound spent before the call: %q", f)
	}
	h := given(10 * time.Second)
	h.Calls[0].Deadline = false // a stop cancelled it
	if f := checkBoundsKept(h); len(f) != 0 {
		t.Errorf("cancelled by a stop: %q", f)
	}
}

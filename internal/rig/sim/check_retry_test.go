package sim

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// retried is a chart page failing with 503 and tried again after each
// wait, the daemon's log saying each retry as it sends it.
func retried(t *testing.T, waits ...time.Duration) *History {
	h := &History{Config: Config{Start: t0}, Starts: []time.Time{t0}, Log: filepath.Join(t.TempDir(), "daemon.log")}
	at := t0.Add(time.Minute)
	var log strings.Builder
	for i := 0; i <= len(waits); i++ {
		c := Call{Sent: at, At: at, Worker: WorkerDaemon, Path: "/youtube/v3/videos", Kind: KindChart, Region: "US", Status: 503}
		if i > 0 {
			log.WriteString("time=" + at.UTC().Format(time.RFC3339Nano) + ` level=WARN msg="upstream attempt failed; retrying" op=videos.list attempt=` +
				string(rune('0'+i)) + " delay=1s err=\"HTTP 503 backendError\"\n")
		}
		h.Calls = append(h.Calls, c)
		if i < len(waits) {
			at = at.Add(waits[i])
		}
	}
	if err := os.WriteFile(h.Log, []byte(log.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return h
}

func TestCheckHoldsARetryToItsWait(t *testing.T) {
	if f := checkRetries(retried(t, 300*time.Millisecond, 900*time.Millisecond, 1500*time.Millisecond)); len(f) != 0 {
		t.Fatalf("waits within the backoff: %q", f)
	}
	soon := checkRetries(retried(t, 300*time.Millisecond, 100*time.Millisecond))
	if len(soon) != 1 || !strings.Contains(soon[0], "1 attempts came sooner after a transient failure of the same call than the retry's least wait: chart US   at 2026-10-25T00:01:00.4Z, 100ms after attempt 2 failed (HTTP 503), sooner than 500ms") {
		t.Errorf("a retry with no wait: %q", soon)
	}
	// the wait a base of zero makes: the cap, every time
	late := checkRetries(retried(t, 17*time.Second, 25*time.Second))
	if len(late) != 1 || !strings.Contains(late[0], "2 retries the daemon said came later after the failure than the retry's wait: chart US   at 2026-10-25T00:01:17Z, 17s after attempt 1 failed (HTTP 503), later than 500ms and 5s") {
		t.Errorf("retries at the cap: %q", late)
	}
	// the same call asked again by the next life, or by another worker, is no retry
	h := retried(t, 17*time.Second)
	h.Starts = append(h.Starts, t0.Add(time.Minute+time.Second))
	if f := checkRetries(h); len(f) != 0 {
		t.Errorf("asked again by the next life: %q", f)
	}
	h = retried(t, 100*time.Millisecond)
	h.Calls[1].Worker = WorkerOnce
	if f := checkRetries(h); len(f) != 0 {
		t.Errorf("asked by another worker: %q", f)
	}
	// a call the log does not say is a retry, after its wait's most: the
	// next pass, not held
	h = retried(t, 5*time.Second)
	os.WriteFile(h.Log, nil, 0o644)
	if f := checkRetries(h); len(f) != 0 {
		t.Errorf("a later call not said a retry: %q", f)
	}
}

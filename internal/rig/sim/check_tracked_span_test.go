package sim

import (
	"net/http"
	"strings"
	"testing"
	"time"
)

// A video a chart page named at 01:00 is tracked within --track-for 1h
// and a slot of --track-every 1h after it (and the delivery bound), not
// at 04:00, nor one no page ever named; a second process's call is not
// the daemon's tracking.
func TestCheckFindsAVideoTrackedPastItsSpan(t *testing.T) {
	day := func(stats ...Call) *History {
		h := history(nil, nil, 1)
		h.TrackFor, h.TrackEvery = time.Hour, time.Hour
		h.Calls = append([]Call{{At: t0.Add(time.Hour), Kind: KindChart, Status: http.StatusOK, IDs: []string{"a", "b"}}}, stats...)
		return h
	}
	at := func(hr float64, id, worker string) Call {
		return Call{At: t0.Add(time.Duration(hr * float64(time.Hour))), Kind: KindStats, Worker: worker, First: id, N: 2}
	}
	if f := checkTrackedInSpan(day(at(1.5, "a", WorkerDaemon), at(3, "a", WorkerDaemon))); len(f) != 0 {
		t.Errorf("tracked within the span and a slot: %q", f)
	}
	f := checkTrackedInSpan(day(at(2, "a", WorkerDaemon), at(4, "a", WorkerDaemon), at(4, "z", WorkerDaemon), at(5, "a", WorkerOnce)))
	if len(f) != 1 || !strings.Contains(f[0], "tracking: 2 of 3 calls asked first for a video no chart showed within --track-for 1h0m0s") ||
		!strings.Contains(f[0], "a at 2026-10-25T04:00:00Z, last charted 3h0m0s before; z at 2026-10-25T04:00:00Z, never charted before") {
		t.Errorf("tracked 3 h after its chart, and one never charted: %q", f)
	}
	if f := checkTrackedInSpan(day(at(0.5, "a", WorkerDaemon))); len(f) != 1 || !strings.Contains(f[0], "never charted before") {
		t.Errorf("tracked before its chart: %q", f)
	}
}

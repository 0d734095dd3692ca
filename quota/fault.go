package quota

import (
	"log/slog"
	"sync"
	"time"

	"github.com/ingestworks/ingest"
)

// remindEvery is how often a fault that goes on is said again: an on-call
// reads one line when it starts, one when it ends, and a reminder in
// between no more often than this, never a line per attempt.
const remindEvery = time.Minute

// fault is one thing that fails attempt after attempt (a note the
// database will not take while it is down): said when it starts, reminded
// at most every remindEvery with how often it failed, and said when it
// ends with how long it lasted and how many attempts it cost.
type fault struct {
	mu          sync.Mutex
	since, said time.Time // zero since: no fault
	failed      int
}

// fail notes a failed attempt at now of what, as the log line says it.
func (f *fault) fail(log *slog.Logger, what string, now time.Time, err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.failed++
	switch {
	case f.since.IsZero():
		f.since, f.said = now, now
		log.Warn(what+": failing", ingest.LogErr, err)
	case now.Sub(f.said) >= remindEvery:
		f.said = now
		log.Warn(what+": still failing", "since", f.since.UTC().Format(time.RFC3339), "failed", f.failed, ingest.LogErr, err)
	}
}

// ok notes an attempt of what that succeeded at now: the end of a fault,
// if one was under way.
func (f *fault) ok(log *slog.Logger, what string, now time.Time) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.since.IsZero() {
		return
	}
	log.Info(what+": working again", "down_for", now.Sub(f.since).Round(time.Second).String(), "failed", f.failed)
	f.since, f.said, f.failed = time.Time{}, time.Time{}, 0
}

// Package clock is the house's one clock: what every part that reads the
// time is handed, built once where a command is assembled (wiring) and
// read nowhere else, so that a test moves time for all of them at once and
// a rehearsal steps one host's clock without touching the machine's
// (docs/operations/faults.md, Rehearsing a clock step).
//
// A clock here only tells the time, and it is required: a part handed
// none is a programming error, never the host's clock in silence. The
// waits the parts keep (a lease's renewals, a retry's backoff, the stop's
// bound) are measured by the runtime's timers through this package's
// NewTimer, After, NewTicker and Sleep (wait.go), which a testing/synctest
// bubble makes virtual (docs/testing.md). internal/rig/hostclock refuses any
// other read of the host's clock outside this package and the test rigs.
package clock

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ingestworks/ingest"
)

// Clock is the root's: what the parts take.
type Clock = ingest.Clock

// System is the host's clock.
var System Clock = system{}

type system struct{}

func (system) Now() time.Time { return time.Now() }

// Func is a function read as a clock: a test's clock that follows
// another (a server's, or an offset from a test's).
type Func func() time.Time

func (f Func) Now() time.Time { return f() }

// RehearseEnv names the file whose content is the house clock's offset
// from the host's: a rehearsal tool, as the fake upstream's --date-offset.
const RehearseEnv = "INGEST_REHEARSE_CLOCK_FILE"

// recheck spaces the looks at the rehearsal file: a step shows within a
// second, and the hot path pays an atomic load in between.
const recheck = time.Second

// Rehearsal is the host's clock offset by the content of a file, read
// again when the file changes.
type Rehearsal struct {
	path   string
	onBad  func(error) // a change that cannot be read: the offset stays
	offset atomic.Int64
	next   atomic.Int64 // Unix ns (host's clock) of the next look
	mu     sync.Mutex   // one look at a time
	seen   fileStamp
}

type fileStamp struct {
	mod  time.Time
	size int64
	ok   bool
}

// FromEnv is the house clock as the environment says: System, or a
// Rehearsal when RehearseEnv names a file. A file whose content is not a
// duration is an error naming the variable; onBad hears of a later
// change that is not one, and the offset stays what it was.
func FromEnv(getenv func(string) string, onBad func(error)) (Clock, error) {
	path := getenv(RehearseEnv)
	if path == "" {
		return System, nil
	}
	r := &Rehearsal{path: path, onBad: onBad}
	if err := r.look(); err != nil {
		return nil, err
	}
	return r, nil
}

// Offset is how far the clock reads from the host's.
func (r *Rehearsal) Offset() time.Duration { return time.Duration(r.offset.Load()) }

func (r *Rehearsal) Now() time.Time {
	host := time.Now()
	if host.UnixNano() >= r.next.Load() {
		if err := r.look(); err != nil && r.onBad != nil {
			r.onBad(err)
		}
	}
	return host.Add(r.Offset())
}

// look reads the file when it changed since the last look; another
// caller's look in progress makes it return at once. An absent or empty
// file is no offset.
func (r *Rehearsal) look() error {
	if !r.mu.TryLock() {
		return nil
	}
	defer r.mu.Unlock()
	r.next.Store(time.Now().Add(recheck).UnixNano())
	fi, err := os.Stat(r.path)
	var st fileStamp
	switch {
	case errors.Is(err, os.ErrNotExist):
	case err != nil:
		return fmt.Errorf("%s: %w", RehearseEnv, err)
	default:
		st = fileStamp{mod: fi.ModTime(), size: fi.Size(), ok: true}
	}
	if st == r.seen && r.seen.ok {
		return nil
	}
	off, err := readOffset(r.path, st.ok)
	r.seen = st // a bad content is told once, not at every look
	if err != nil {
		return err
	}
	r.offset.Store(int64(off))
	return nil
}

func readOffset(path string, exists bool) (time.Duration, error) {
	if !exists {
		return 0, nil
	}
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("%s: %w", RehearseEnv, err)
	}
	text := strings.TrimSpace(string(b))
	if text == "" {
		return 0, nil
	}
	d, err := time.ParseDuration(text)
	if err != nil {
		return 0, fmt.Errorf("%s: %s holds %q: want the clock's offset as a Go duration (90s, -2m), or nothing", RehearseEnv, path, text)
	}
	return d, nil
}

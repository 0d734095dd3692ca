// Package clocktest is the clock a test sets and moves (Fake): it stands
// still until the test moves it, so that a promise about minutes or days
// is checked at the instants the test names, never at the host's. It is a
// rig, never in the binary: the product's clocks are package clock's.
package clocktest

import (
	"sync"
	"time"
)

// Fake is a clock a test sets: it stands still until moved.
type Fake struct {
	mu  sync.Mutex
	now time.Time
}

// NewFake is a Fake reading at.
func NewFake(at time.Time) *Fake { return &Fake{now: at} }

func (f *Fake) Now() time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.now
}

// Advance moves the clock on by d.
func (f *Fake) Advance(d time.Duration) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.now = f.now.Add(d)
}

// AdvanceTo moves the clock on to at; never back.
func (f *Fake) AdvanceTo(at time.Time) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if at.After(f.now) {
		f.now = at
	}
}

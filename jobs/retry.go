package jobs

import (
	"context"
	"errors"
	"time"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/clock"
)

// attempt is one try of an entry for a slot.
type attempt struct {
	slot    time.Time
	catchUp bool // the slot passed while no daemon ran
	// again: a retry of this daemon's try of the slot that the limiter
	// could not decide. That try's run is in the store and holds the slot
	// against every other process (Runner.LastStart), so the retry does
	// not read it as another's; nor does it count the slot started again.
	again bool
	wait  time.Duration // how long this retry waited; zero on a first try
}

// A chart pass the limiter could not decide is tried again FirstRetry
// after, each wait after that twice the one before, up to MaxRetry, until
// its entry's next slot.
const (
	FirstRetry = 5 * time.Second
	MaxRetry   = 5 * time.Minute
)

// undecided reports whether a chart pass failed because the limiter could
// not decide its first call (ingest.ErrUnavailable) and so spent nothing:
// nothing was asked of the upstream, and trying again costs nothing.
func undecided(e Entry, end Ended) bool {
	return e.Kind.charts() && end.Status == ingest.StatusFailed && errors.Is(end.Err, ingest.ErrUnavailable) && ingest.SpentNothing(end.Units)
}

// retry tries a's slot of e again after a wait, in its own goroutine: a
// Redis that cannot decide for seconds (a replica cut off, a failover)
// must not cost a chart its whole slot, nor hold the catch-up's other
// charts while it waits. The pacer is asked again, as it gave the failed
// try's credit back.
func (d *Daemon) retry(ctx context.Context, e Entry, a attempt, stop <-chan struct{}) {
	a.again, a.wait = true, min(max(2*a.wait, FirstRetry), MaxRetry)
	d.askAgain(ctx, e, a, a.wait, stop, func() {
		d.Runner.Logger.Info("the limiter could not decide, and the pass spent nothing: trying it again within its slot",
			e.logKey(), e.Name, "in", a.wait.String())
	})
}

// RoomEvery is how often a chart pass the pacer declined for want of room
// asks its slot again, until its next slot.
const RoomEvery = 5 * time.Second

// waitForRoom asks a's slot of e again every RoomEvery until the pacer no
// longer waits for room or the entry's next slot comes: a pass that finds
// the pools short at its slot waits there for the room, as the plan
// counts on, rather than a whole slot while whoever asks first takes each
// unit as it frees. The pacer is asked at the same slot, which it counts
// once.
func (d *Daemon) waitForRoom(ctx context.Context, e Entry, a attempt, stop <-chan struct{}) {
	d.askAgain(ctx, e, a, RoomEvery, stop, func() {
		d.Runner.Logger.Debug("pass waits at its slot for the room", e.logKey(), e.Name, "in", RoomEvery.String())
	})
}

// askAgain runs a's slot of e again (runPaced) after wait, in its own
// goroutine, saying so first; never at or after the entry's next slot,
// which asks anyway, nor once the daemon stops, whose stop ends the wait.
func (d *Daemon) askAgain(ctx context.Context, e Entry, a attempt, wait time.Duration, stop <-chan struct{}, say func()) {
	now := d.Runner.now()
	if !now.Add(wait).Before(e.Slots.Next(now)) {
		return
	}
	done, ok := d.Runner.hold() // the daemon's stop waits for the wait, which ends at stop
	if !ok {
		return
	}
	say()
	go func() {
		defer done()
		t := clock.NewTimer(wait)
		defer t.Stop()
		select {
		case <-t.C:
			d.runPaced(ctx, e, a, stop)
		case <-stop:
		case <-ctx.Done():
		}
	}()
}

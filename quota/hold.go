package quota

import (
	"context"
	"database/sql"
)

// hold is the embedded limiter's copy of window.lua's hold. A decision
// taken while the clock reads behind the last one is stamped at the last
// one's time (the clock never goes back), yet it was taken in real time,
// maybe long after that stamp: when the clock comes right it would leave
// the window early by real time, and a clock an hour behind for a few
// seconds would free every call of those seconds at once. So the calls
// stamped from the hold's start (from) count as decided when the clock
// is next seen right (till; zero while it still reads behind: now), and
// stay a whole window of real time. A hold that still counts when the
// clock reads behind again stretches from its first decision on.
type hold struct {
	from, till int64
	moved      bool
}

// move takes in a reading raw of the clock, and last, the time the
// decision would have without it.
func (h *hold) move(raw, last, span int64) {
	was := *h
	switch {
	case raw < last:
		if h.from == 0 || (h.till > 0 && h.till+span <= last) {
			h.from = last
		}
		h.till = 0
	case h.from > 0 && h.till == 0:
		h.till = raw
	case h.from > 0 && h.till+span <= raw:
		h.from, h.till = 0, 0
	}
	h.moved = h.from != was.from || h.till != was.till
}

// stamp is when an entry of time ms counts as decided, at now.
func (h hold) stamp(ms, now int64) int64 {
	if h.from > 0 && ms >= h.from && (h.till == 0 || ms < h.till) {
		if h.till > 0 {
			return h.till
		}
		return now
	}
	return ms
}

// edge is the newest time an entry may have and be out of a window at now
// (stamp never goes back, so the entries in the window are those after
// one time).
func (h hold) edge(now, window int64) int64 {
	e := now - window
	if h.stamp(e, now) > e {
		e = h.from - 1
	}
	return e
}

// holdKey is the quota_clock row of the quota key's hold: from in last_ms,
// till in seq. Braces keep it apart from the keys' own rows.
func (s *embedded) holdKey() string { return s.opts.QuotaKey + "{hold}" }

// readHold reads the hold and moves it by the clock's reading raw.
func (s *embedded) readHold(ctx context.Context, tx *sql.Tx, h *hold, raw, last int64) error {
	var err error
	if h.from, h.till, err = s.t.Clocks.ClockRow(ctx, tx, s.holdKey()); err != nil {
		return err
	}
	h.move(raw, last, s.opts.Costs.Span().Milliseconds())
	return nil
}

// keepHold writes the hold when the decision moved it.
func (s *embedded) keepHold(ctx context.Context, tx *sql.Tx, h hold) error {
	if !h.moved {
		return nil
	}
	return s.setRow(ctx, tx, s.holdKey(), h.from, h.till)
}

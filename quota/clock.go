package quota

import (
	"bytes"
	"context"
	"database/sql"
	"hash/fnv"
	"os"
	"strconv"
	"sync"
	"time"
)

// The embedded limiter's clock: never behind its last decision, guarded by
// the boot clock, and held while it reads behind (docs/explanation/quota.md). The
// Redis limiter does the same in window.lua.

// KernelUptime is kernelUptime, for a Now that is the host's clock moved
// only by a rehearsal (package clock), under which the guard stays on.
func KernelUptime() (boot string, since time.Duration, ok bool) { return kernelUptime() }

// kernelUptime is the clock guard's second clock: the boot id and the time
// since boot (Linux's /proc; ok is false elsewhere, and the guard is off).
// A step of the wall clock does not move it: while the boot stays the
// same, wall time minus time since boot is a constant, the boot's wall
// time, and a reading that moves it by more than the guard is a step.
func kernelUptime() (boot string, since time.Duration, ok bool) {
	bootID := bootID()
	if bootID == "" {
		return "", 0, false
	}
	b, err := os.ReadFile("/proc/uptime")
	if err != nil {
		return "", 0, false
	}
	f, _, _ := bytes.Cut(b, []byte(" "))
	secs, err := strconv.ParseFloat(string(f), 64)
	if err != nil {
		return "", 0, false
	}
	return bootID, time.Duration(secs * float64(time.Second)), true
}

var bootID = sync.OnceValue(func() string {
	b, _ := os.ReadFile("/proc/sys/kernel/random/boot_id")
	return string(bytes.TrimSpace(b))
})

// bootHash keeps a boot id in an integer column.
func bootHash(boot string) int64 {
	h := fnv.New64a()
	h.Write([]byte(boot))
	return int64(h.Sum64() >> 2)
}

// hold is window.lua's hold. A decision taken while the clock reads behind
// the last one is stamped at the last one's time, yet it was taken in real
// time, maybe long after: when the clock comes right it would leave the
// window early, and a clock an hour behind for a few seconds would free
// every call of those seconds at once. So the calls stamped from the
// hold's start (from) count as decided when the clock is next seen right
// (till; zero while it still reads behind: now), and stay a whole window
// of real time. A hold that still counts when the clock reads behind again
// stretches from its first decision on.
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

// holdKey and bootKey name the quota_clock rows kept beside the quota
// key's: its hold (from in last_ms, till in seq) and a boot's reference
// (the boot's wall time as the last confirmed decision saw it, and the
// boot's hash), a row per boot, so that hosts sharing a PostgreSQL
// database each have their own. Braces, which no quota key holds, keep
// them apart.
func (s *embedded) holdKey() string { return s.opts.QuotaKey + "{hold}" }

func (s *embedded) bootKey(boot int64) string {
	return s.opts.QuotaKey + "{boot " + strconv.FormatInt(boot, 36) + "}"
}

// clock is this limiter's clock (the wall), guarded and never behind the
// last decision. With h, it also reads the hold and moves it.
func (s *embedded) clock(ctx context.Context, tx *sql.Tx, h *hold) (now, wall, seq int64, err error) {
	last, seq, err := s.t.Clocks.ClockRow(ctx, tx, s.opts.QuotaKey)
	if err == nil {
		wall, err = s.wall(ctx, tx)
	}
	if err != nil {
		return 0, 0, 0, err
	}
	now, err = s.guarded(ctx, tx, wall, last)
	if err == nil {
		last, err = s.believed(ctx, tx, now, last)
	}
	if err == nil && h != nil {
		if h.from, h.till, err = s.t.Clocks.ClockRow(ctx, tx, s.holdKey()); err == nil {
			h.move(now, last, s.opts.Costs.Span().Milliseconds())
		}
	}
	return max(now, last), wall, seq, err
}

// keepHold writes the hold when the decision moved it.
func (s *embedded) keepHold(ctx context.Context, tx *sql.Tx, h hold) error {
	if !h.moved {
		return nil
	}
	return s.t.Clocks.SetClockRow(ctx, tx, s.holdKey(), h.from, h.till)
}

// believed is the clock row's time unless it is corrupt: ahead of the
// clock and of every entry of the log by more than Guard, which no
// decision writes. Believing it would slide the window past calls still in
// it (corruption is a loss, never a gift); the log, which lives with the
// ledger, is whole, so its newest entry is the floor instead.
func (s *embedded) believed(ctx context.Context, tx *sql.Tx, now, last int64) (int64, error) {
	g := s.opts.Guard.Milliseconds()
	if last-now <= g {
		return last, nil
	}
	newest, err := s.t.Clocks.Newest(ctx, tx, s.opts.QuotaKey)
	if err != nil || last-newest <= g {
		return last, err
	}
	s.opts.Logger.Warn("the limiter's clock row is ahead of the clock and of every call by more than the guard: not believed",
		"guard", s.opts.Guard, "ahead", time.Duration(last-now)*time.Millisecond)
	return newest, nil
}

// guarded is the clock guard: a reading more than Guard ahead of the last
// decision that the boot clock does not confirm (the boot's wall time
// moved by more than Guard) is not believed. The decision is taken at the
// last good time carried on by the boot clock, so that one odd reading
// never throws the log away, and time still passes while the wall clock
// is wrong.
func (s *embedded) guarded(ctx context.Context, tx *sql.Tx, wall, last int64) (int64, error) {
	if s.opts.Uptime == nil {
		return wall, nil
	}
	boot, since, ok := s.opts.Uptime()
	if !ok {
		return wall, nil
	}
	at, g := wall-since.Milliseconds(), s.opts.Guard.Milliseconds()
	refAt, refID, err := s.t.Clocks.ClockRow(ctx, tx, s.bootKey(bootHash(boot)))
	if err != nil {
		return 0, err
	}
	if refID == bootHash(boot) && wall-last > g && (at-refAt > g || refAt-at > g) {
		s.opts.Logger.Warn("the clock jumped ahead and the boot clock does not agree: decided at the last good time",
			"guard", s.opts.Guard, "jump", time.Duration(at-refAt)*time.Millisecond)
		return refAt + since.Milliseconds(), nil
	}
	return wall, nil
}

// setClock moves the clock to now and, when this decision's time is the
// wall clock's, the boot reference beside it: a guarded decision leaves
// the last good one.
func (s *embedded) setClock(ctx context.Context, tx *sql.Tx, now, wall, seq int64) error {
	err := s.t.Clocks.SetClockRow(ctx, tx, s.opts.QuotaKey, now, seq)
	if err != nil || s.opts.Uptime == nil {
		return err
	}
	boot, since, ok := s.opts.Uptime()
	if g := s.opts.Guard.Milliseconds(); !ok || now-wall > g || wall-now > g {
		return nil
	}
	return s.t.Clocks.SetClockRow(ctx, tx, s.bootKey(bootHash(boot)), now-since.Milliseconds(), bootHash(boot))
}

package pace

import (
	"context"
	"log/slog"
	"time"
)

// Declined is why the pacer declined an entry's slot: each is a slot the
// plan meant not to run, never a slot missed.
type Declined string

// The reasons a slot is declined.
const (
	// DeclinedCaughtUp: the pass counted for this slot ran before it, at
	// the catch-up at start (or another process's pass off the slots).
	DeclinedCaughtUp Declined = "caught up"
	// DeclinedUnearned: the entry's planned cadence is longer than its
	// slots, and it has not earned a pass since its last.
	DeclinedUnearned Declined = "not earned"
	// DeclinedNoRoom: the pools do not hold its pass now.
	DeclinedNoRoom Declined = "no room"
	// DeclinedSpread: its level keeps to its planned rate over the period.
	DeclinedSpread Declined = "spread"
)

// unearned is why an entry that has not earned a pass at slot is declined
// there: its pass of this slot ran before it (a catch-up), or it has not
// earned one since.
func (p *Pacer) unearned(i int, slot time.Time) Declined {
	done, ok := p.last[p.entries[i].Name]
	if ok && done.Before(slot) && p.counted(i, done, true).Equal(slot) {
		return DeclinedCaughtUp
	}
	return DeclinedUnearned
}

// decline counts a slot the entry does not run at, and says why: at info
// the first of a run of declines for one reason, with the entry's last
// pass and the slot it runs at next by the plan (what report and /quota
// show), then at debug until it runs; an ask off the slots (a catch-up, a
// cron's) is no slot declined.
func (p *Pacer) decline(i int, slot time.Time, why Declined) {
	if !p.onSlot(i, slot) {
		return
	}
	name := p.entries[i].Name
	if p.declined[name] == nil {
		p.declined[name] = map[Declined]int{}
	}
	p.declined[name][why]++
	level := slog.LevelDebug
	if p.told[name] != why {
		p.told[name], level = why, slog.LevelInfo
	}
	attrs := []any{"entry", name, "slot", slot.UTC().Format(time.RFC3339), "reason", string(why)}
	if last, ok := p.last[name]; ok {
		attrs = append(attrs, "last_pass_ago", slot.Sub(last).Round(time.Second).String())
	}
	if next := p.nextFrom(i, slot); !next.IsZero() {
		attrs = append(attrs, "next", next.UTC().Format(time.RFC3339))
	}
	p.logger().Log(context.Background(), level, "pace: slot declined", attrs...)
}

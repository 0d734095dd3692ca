package sim

import (
	"fmt"
	"time"
)

// checkClockAsked: the upstream's time is asked at no quota cost (the
// discovery document, without the key) only by a boot with no reading of
// it yet, or after a decision was refused on the clock
// (docs/explanation/redis.md): a life of the process on a boot that has
// read it (the simulation's restarts keep the boot) carries on the
// reading its ledger keeps. An ask is let be while the upstream answers
// too slowly for the ask's budget, and the first after (slowAsk); up to
// the history's first keyed call (the boot's first reading, on a fresh
// database); and from a
// wrong Date's start to a minute after the first keyed call answered once
// it is right: a decision refused on the clock asks again, and the
// reading, wrong, is carried on until an answer brings the right one. A
// worker of another database asks in its first run: its ledger has none.
func checkClockAsked(h *History) []string {
	if len(h.Calls) == 0 {
		return nil
	}
	var stray []string
	for _, a := range h.Asks {
		if !a.After(h.Calls[0].At) || h.clockInDoubt(a) || h.peerFirst(a) || h.slowAsk(a) {
			continue
		}
		stray = append(stray, a.UTC().Format(time.RFC3339))
	}
	if len(stray) == 0 {
		return nil
	}
	return []string{fmt.Sprintf("the upstream's time was asked %d times by a boot that had read it, with its Date right and no decision refused on the clock: %s",
		len(stray), firstFew(stray))}
}

// slowAsk: a is an ask of the upstream's time while it answered too slowly
// for the ask's budget (SlowStart), or the first after, which reads it: a
// boot with no reading asks again, at most once a minute, until one comes.
func (h *History) slowAsk(a time.Time) bool {
	for _, s := range h.Slow {
		if a.Before(s.From) {
			continue
		}
		if !a.After(s.To) {
			return true
		}
		for _, b := range h.Asks {
			if !b.Before(s.To) {
				if !a.After(b) {
					return true
				}
				break
			}
		}
	}
	return false
}

// clockInDoubt: at t the upstream's Date was wrong, or had been and no
// keyed call answered since it was right again (a minute's grace), so that
// the reading the process carried on may have been refused.
func (h *History) clockInDoubt(t time.Time) bool {
	for _, s := range h.Skews {
		if t.Before(s.From) {
			continue
		}
		settled := h.End
		for _, c := range h.Calls {
			if c.At.After(s.To) {
				settled = c.At
				break
			}
		}
		if !t.After(settled.Add(time.Minute)) {
			return true
		}
	}
	return false
}

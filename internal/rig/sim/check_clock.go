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
// reading its ledger keeps. An ask is let be up to the history's first
// keyed call (the boot's first reading, on a fresh database), and from a
// wrong Date's start to a minute after the first keyed call answered once
// it is right: a decision refused on the clock asks again, and the
// reading, wrong, is carried on until an answer brings the right one.
func checkClockAsked(h *History) []string {
	if len(h.Calls) == 0 {
		return nil
	}
	var stray []string
	for _, a := range h.Asks {
		if !a.After(h.Calls[0].At) || h.clockInDoubt(a) {
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

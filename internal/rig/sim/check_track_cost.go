package sim

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// checkTrackCostKept: a restart forgets no measured cost. The pacer
// rebuilds each entry's cost from the database at every plan, tracking's
// from its recorded passes and the calls between each one's start and end
// (docs/explanation/pacing.md), so the plan a restarted daemon publishes
// before tracking's first pass of its life plans tracking at what its
// passes of the day before cost, not at the guess of one call. The
// operator reads it on /api/v1/quota: the tracking pool's fixed_units
// over the time to its reset, at tracking's floor, is the plan's cost of
// a pass. It is held to no less than the least a pass of the day before
// cost, as the fake counted the calls it answered, less a tenth and a
// unit for the rounding. A day whose passes met a wrong Date, a full disk,
// a limiter out of reach or a move of the database is let be (the ledger
// may then hold less than the upstream answered), and so is one with a
// `run --once` beside a pass (the fake's count is then two processes').
func checkTrackCostKept(h *History) []string {
	if h.TrackFor == 0 || len(h.Starts) < 2 {
		return nil
	}
	passes := h.trackPasses()
	var out []string
	for _, r := range h.Operator {
		p := r.Plan
		if r.Down || r.Err != "" || p == nil {
			continue
		}
		life := h.lifeAt(r.At)
		if life.IsZero() || life.Equal(h.Starts[0]) || p.At.Before(life.Truncate(time.Second)) {
			continue
		}
		if slices.ContainsFunc(passes, func(t trackPass) bool { return !t.From.After(r.At) && !t.To.Before(life) }) {
			continue // tracking passed in this life before the look: measured again
		}
		day := Interval{p.At.Add(-24*time.Hour + time.Minute), life}
		least, pool, n := int64(0), "", 0
		for _, t := range passes {
			if t.From.Before(day.From) || t.To.After(day.To) {
				continue
			}
			if h.ledgerMayLack(t.Interval) || h.onceRanIn(t.Interval) {
				n = -1
				break
			}
			for pl, u := range t.Units {
				if n == 0 || u < least {
					least, pool = u, pl
				}
			}
			n++
		}
		reset, floor := p.Reset[pool], p.Floor[trackEntry]
		if n <= 0 || reset.Sub(p.At) < time.Hour || floor <= 0 {
			continue
		}
		planned := float64(p.Fixed[pool]) * floor.Seconds() / reset.Sub(p.At).Seconds()
		if planned*1.1+1 < float64(least) {
			out = append(out, fmt.Sprintf("the plan published at %s, %s into a life of the process, planned tracking at %.1f units a pass, where each of its %d passes of the day before cost %d or more: a restart forgot its measured cost",
				p.At.UTC().Format(time.RFC3339), p.At.Sub(life), planned, n, least))
		}
	}
	return out
}

// trackEntry is tracking's name in a plan.
const trackEntry = "track"

// trackPass is one of tracking's passes as the fake saw it: a run of the
// daemon's batchGetStats calls no further apart than half a slot, and the
// units of those it answered whole, by pool.
type trackPass struct {
	Interval
	Units map[string]int64
}

// trackPasses are tracking's passes, oldest first. The fake's count is
// of each pool since the start, after each call: a call's units are what
// it adds to the count before it.
func (h *History) trackPasses() []trackPass {
	var out []trackPass
	for i, c := range h.Calls {
		if c.Worker != WorkerDaemon || !strings.HasSuffix(c.Path, "videos:batchGetStats") {
			continue
		}
		if n := len(out); n == 0 || c.At.Sub(out[n-1].To) > h.TrackEvery/2 {
			out = append(out, trackPass{Interval: Interval{c.At, c.At}, Units: map[string]int64{}})
		}
		t := &out[len(out)-1]
		t.To = c.At
		if c.Status != 200 || c.Cut || c.Deadline {
			continue
		}
		for pool, n := range c.Charged {
			if i > 0 {
				n -= h.Calls[i-1].Charged[pool]
			}
			if n > 0 {
				t.Units[pool] += n
			}
		}
	}
	return out
}

// lifeAt is when the life of the process under way at t started, zero
// before the first.
func (h *History) lifeAt(t time.Time) time.Time {
	var at time.Time
	for _, s := range h.Starts {
		if !s.After(t) {
			at = s
		}
	}
	return at
}

// ledgerMayLack: at some moment of in the upstream's Date was wrong, the
// disk was full, the limiter was out of reach, or the daemon ran on a
// copy, so the database's ledger may hold less of in's calls than the
// upstream answered.
func (h *History) ledgerMayLack(in Interval) bool {
	meets := func(spans []Interval) bool {
		return slices.ContainsFunc(spans, func(f Interval) bool { return !f.From.After(in.To) && !in.From.After(f.To) })
	}
	near := func(ts []time.Time) bool {
		return slices.ContainsFunc(ts, func(t time.Time) bool { return !t.Before(in.From.Add(-time.Hour)) && !t.After(in.To) })
	}
	return meets(h.Skews) || meets(h.Fulls) || meets(h.Unreachable) || meets(h.Moved) || near(h.Stalls) || near(h.Losses)
}

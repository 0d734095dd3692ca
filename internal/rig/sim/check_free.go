package sim

import (
	"fmt"
	"os"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/ingestworks/ingest"
)

// When a pool has room again: the time a refused call is told to try
// again (a stopped pass's retry_at) and a pool's free_at on
// /api/v1/quota, held to the upstream's own charges. docs/contract.md
// promises the exact time when enough units free up, never before a block
// ends: the earliest instant at which the pool's window and its calendar
// day hold the call again, and, after the upstream refused the pool as
// spent, its reset. Later, the daemon waits longer than it must and loses
// work; sooner, it would be refused again.

// freeSlack is how far a told time may stand from the one the
// upstream's charges give: the log and the API say whole seconds, and a
// call is stamped when the limiter admits it, a moment before it reaches
// the upstream.
const freeSlack = 2 * time.Second

// refusedLine is a pass the limiter stopped: when, its retry_at (none:
// it said no time), and the operation refused.
var refusedLine = regexp.MustCompile(`^time=(\S+) .* status=stopped .*?(?:retry_at=(\S+) )?detail="quota refused (\S+)"`)

// charge is one call's units in a pool, when the call reached the upstream.
type charge struct {
	at    time.Time
	units int64
}

// upstreamLedger is what the upstream charged each pool, call by call in
// the order they reached it, and when it refused each pool as spent.
type upstreamLedger struct {
	charges map[string][]charge
	refused map[string][]time.Time
}

// upstreamLedgerOf reads the fake's calls: each charged its operation's
// cost (failed calls included), and its costs.yaml price in the daemon's
// own pools (chargesOf), at the moment it reached the upstream.
func upstreamLedgerOf(h *History) upstreamLedger {
	l := upstreamLedger{charges: map[string][]charge{}, refused: map[string][]time.Time{}}
	for _, c := range h.Calls {
		at := c.Sent
		if at.IsZero() {
			at = c.At
		}
		for _, ch := range h.chargesOf(c) {
			l.charges[ch.Pool] = append(l.charges[ch.Pool], charge{at, ch.Units})
		}
		if pool := refusedPool(c); pool != "" {
			l.refused[pool] = append(l.refused[pool], c.At)
		}
	}
	for _, cs := range l.charges {
		sort.SliceStable(cs, func(i, j int) bool { return cs[i].at.Before(cs[j].at) })
	}
	return l
}

// freeAt is when pool p holds units more by the upstream's charges of
// the calls that reached it by until, asked at t: the moment the charges
// whose running sum reaches the excess leave the window (each held the
// window and its delivery bound, as the limiter holds a call), the next
// start of the pool's day when the day is spent, and the day's end after
// a refusal of the pool. Zero: room at t.
func (l upstreamLedger) freeAt(p ingest.Pool, units int64, t, until time.Time) time.Time {
	held := p.Window + ingest.Delivery
	var in []charge
	var used int64
	for _, c := range l.charges[p.Name] {
		if c.at.After(t.Add(-held)) && !c.at.After(until) {
			in = append(in, c)
			used += c.units
		}
	}
	var free time.Time
	if need := used + units - p.Capacity(); need > 0 {
		var sum int64
		for _, c := range in {
			if sum += c.units; sum >= need {
				free = c.at.Add(held)
				break
			}
		}
	}
	if p.Day == nil {
		return free
	}
	// every shape's pools are budgets of the upstream's daily quota, whose
	// day is its own (docs/explanation/quota.md), whatever zone the costs
	// file was read to
	start, end := dayAround(ingest.UpstreamZone, t)
	var day int64
	for _, c := range l.charges[p.Name] {
		if !c.at.Before(start) && c.at.Before(end) && !c.at.After(until) {
			day += c.units
		}
	}
	if day+units > p.Capacity() {
		free = later(free, end)
	}
	for _, r := range l.refused[p.Name] {
		if _, e := dayAround(ingest.UpstreamZone, r); !r.After(until) && e.After(t) {
			free = later(free, e)
		}
	}
	return free
}

// dayAround is the calendar day of loc that holds t: its start and the
// next day's (23 or 25 hours later on the days its clocks change).
func dayAround(loc *time.Location, t time.Time) (start, end time.Time) {
	l := t.In(loc)
	return time.Date(l.Year(), l.Month(), l.Day(), 0, 0, 0, 0, loc), time.Date(l.Year(), l.Month(), l.Day()+1, 0, 0, 0, 0, loc)
}

// freeBetween is the earliest and the latest time the pools of charges
// hold them again at t, by the calls that reached the upstream before t
// and by those that reached it within a call's delivery after (the
// limiter counted those it had admitted by t); t itself for room.
func (l upstreamLedger) freeBetween(h *History, charges []ingest.Charge, t time.Time) (lo, hi time.Time) {
	lo, hi = t, t
	for _, ch := range charges {
		p, ok := h.Costs.Pool(ch.Pool)
		if !ok {
			continue
		}
		lo = later(lo, l.freeAt(p, ch.Units, t, t.Add(-time.Millisecond)))
		hi = later(hi, l.freeAt(p, ch.Units, t, t.Add(reached)))
	}
	return lo, hi
}

// toldRightly: told (zero for room now) lies between lo and hi, each
// give or take freeSlack, where lo == t is room.
func toldRightly(told, t, lo, hi time.Time) bool {
	if told.IsZero() {
		told = t
	}
	return !told.Before(lo.Add(-freeSlack)) && !told.After(hi.Add(freeSlack))
}

// freeExcused: the limiter's time may rest on more than the pools'
// charges at t: a wrong Date (the limiter refuses on its clock), a Redis
// that lost its data or stalled (it waits to recover).
func (h *History) freeExcused(t time.Time) bool {
	for _, s := range h.Skews {
		if (Interval{s.From, s.To.Add(time.Minute)}).Contains(t) {
			return true
		}
	}
	for _, at := range append(append([]time.Time(nil), h.Losses...), h.Stalls...) {
		if !t.Before(at) {
			return true
		}
	}
	return false
}

// checkFreeTimes: every retry_at the daemon logged for a pass the limiter
// stopped, and every free_at /api/v1/quota showed, is when the upstream's
// charges say the pool holds the call again (freeAt), within freeSlack;
// free_at null only for a pool with room for its dearest call.
func checkFreeTimes(h *History) []string {
	l := upstreamLedgerOf(h)
	var out []string
	if f := checkRetryAt(h, l); f != "" {
		out = append(out, f)
	}
	if f := checkFreeAtRead(h, l); f != "" {
		out = append(out, f)
	}
	return out
}

// checkRetryAt: each stopped pass's retry_at, by the log.
func checkRetryAt(h *History, l upstreamLedger) string {
	data, err := os.ReadFile(h.Log)
	if h.Log == "" || err != nil {
		return ""
	}
	var wrong []string
	n := 0
	for _, line := range strings.Split(string(data), "\n") {
		m := refusedLine.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		t, err1 := time.Parse(time.RFC3339Nano, m[1])
		var told time.Time
		var err2 error
		if m[2] != "" {
			told, err2 = time.Parse(time.RFC3339, m[2])
		}
		charges, err3 := h.Costs.Op(m[3])
		if err := firstErr(err1, err2, err3); err != nil {
			wrong = append(wrong, fmt.Sprintf("%q: %v", line, err))
			continue
		}
		if h.freeExcused(t) {
			continue
		}
		n++
		if lo, hi := l.freeBetween(h, charges, t); !toldRightly(told, t, lo, hi) {
			wrong = append(wrong, fmt.Sprintf("%s refused at %s, told to retry at %s, where the upstream's charges hold it again %s",
				m[3], stamp(t), orNull(told), between(t, lo, hi)))
		}
	}
	if len(wrong) == 0 {
		return ""
	}
	return fmt.Sprintf("%d of %d retry times the daemon logged for a refused call are not when the pools hold it again: %s", len(wrong), n, firstFew(wrong))
}

// checkFreeAtRead: each pool's free_at on /api/v1/quota, read while the
// limiter answered and waited for no recovery.
func checkFreeAtRead(h *History, l upstreamLedger) string {
	var wrong []string
	n := 0
	for _, r := range h.Operator {
		if r.Down || r.Err != "" || r.Free == nil || h.freeExcused(r.At) || h.onCopy(r.At) {
			continue
		}
		for _, p := range h.Costs.Pools {
			told, ok := r.Free[p.Name]
			if !ok {
				continue
			}
			n++
			charges := []ingest.Charge{{Pool: p.Name, Units: dearestOf(h.Costs, p.Name)}}
			if lo, hi := l.freeBetween(h, charges, r.At); !toldRightly(told, r.At, lo, hi) {
				wrong = append(wrong, fmt.Sprintf("pool %s read at %s: free_at %s, where the upstream's charges hold its dearest call again %s",
					p.Name, stamp(r.At), orNull(told), between(r.At, lo, hi)))
			}
		}
	}
	if len(wrong) == 0 {
		return ""
	}
	return fmt.Sprintf("%d of %d pools' free_at on /api/v1/quota are not when the pool holds its dearest call again: %s", len(wrong), n, firstFew(wrong))
}

// dearestOf is a pool's largest charge of any operation (costs.yaml): the
// call free_at is about.
func dearestOf(c *ingest.Costs, pool string) int64 {
	var most int64 = 1
	for _, charges := range c.Operations {
		for _, ch := range charges {
			if ch.Pool == pool {
				most = max(most, ch.Units)
			}
		}
	}
	return most
}

// between says lo and hi as a finding reads them.
func between(t, lo, hi time.Time) string {
	switch {
	case !hi.After(t):
		return "now (room)"
	case lo.Equal(hi):
		return "at " + stamp(lo)
	}
	return fmt.Sprintf("between %s and %s", orNow(lo, t), stamp(hi))
}

func orNow(at, t time.Time) string {
	if !at.After(t) {
		return "now"
	}
	return stamp(at)
}

func orNull(t time.Time) string {
	if t.IsZero() {
		return "null"
	}
	return stamp(t)
}

func firstErr(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

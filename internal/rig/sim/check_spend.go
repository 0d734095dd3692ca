package sim

import (
	"fmt"
	"net/http"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/jobs"
)

// chartPlan is a plan line's figures for the default pool: what the
// charts take a day (units_per_day less the category names' and
// tracking's), and a cycle's pages.
var chartPlan = regexp.MustCompile(`^time=(\S+) level=INFO msg=plan pool=` + ingest.DefaultPool +
	` .*pages_per_cycle=(\d+) .*tracking_units_per_day=(\d+) category_units_per_day=(\d+) units_per_day=(\d+) `)

// checkChartsSpend: on each upstream day the daemon's chart passes spent
// of the default pool no more than the plan its log told says the
// charts take a day (report's plan: each chart's pages at its tier's
// cadence, never faster than --every, docs/explanation/pacing.md), in
// proportion to the day's hours, and a cycle more for a pass that falls
// either side of a midnight. The days a life of the process started in
// (its catch-up), or the upstream failed (the retries), or a second
// process ran are let be: what they spend beside the plan is their own.
func checkChartsSpend(h *History) []string {
	if h.Log == "" {
		return nil
	}
	data, err := os.ReadFile(h.Log)
	if err != nil {
		return []string{fmt.Sprintf("the daemon's log: %v", err)}
	}
	type plan struct {
		at           time.Time
		units, cycle int64
	}
	var plans []plan
	for _, line := range strings.Split(string(data), "\n") {
		m := chartPlan.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		at, _ := time.Parse(time.RFC3339Nano, m[1])
		n := make([]int64, 4)
		for i := range n {
			n[i], _ = strconv.ParseInt(m[i+2], 10, 64)
		}
		plans = append(plans, plan{at: at, cycle: n[0], units: n[3] - n[1] - n[2]})
	}
	if len(plans) == 0 {
		return nil
	}
	daemon := map[string]bool{}
	for _, c := range h.Charts {
		daemon[c.Code] = true
	}
	spent := map[time.Time]int64{}
	var prev int64
	for _, c := range h.Calls {
		charged := c.Charged[ingest.DefaultPool] - prev
		prev = c.Charged[ingest.DefaultPool]
		if c.Kind != KindChart || !daemon[c.Region] || c.Status != http.StatusOK {
			continue
		}
		l := c.At.In(ingest.UpstreamZone)
		spent[time.Date(l.Year(), l.Month(), l.Day(), 0, 0, 0, 0, ingest.UpstreamZone)] += charged
	}
	var over []string
	for day, units := range spent {
		end := ingest.UpstreamReset(day)
		in := Interval{day, end}
		if day.Before(h.Start) || end.After(h.End) || h.startIn(day.Add(-time.Nanosecond), end) || h.failingIn(in) || h.downIn(day, end) || h.joinedIn(in) {
			continue
		}
		var most plan // the dearest plan told by the day's end
		for _, p := range plans {
			if !p.at.After(end) && p.units >= most.units {
				most = p
			}
		}
		if bound := most.units*int64(end.Sub(day))/int64(24*time.Hour) + most.cycle; units > bound {
			over = append(over, fmt.Sprintf("%s: %d units, over the plan's %d a day for the charts (%d with its %s and a cycle of %d pages)",
				day.Format(time.DateOnly), units, most.units, bound, end.Sub(day), most.cycle))
		}
	}
	if len(over) == 0 {
		return nil
	}
	slices.Sort(over)
	return []string{fmt.Sprintf("on %d of the upstream's days the charts spent more of the default pool than the plan the daemon told: %s", len(over), firstFew(over))}
}

// checkBatches: tracking and the refresh ask for videos in whole calls
// (jobs.TrackBatch and jobs.RefreshBatch ids a call, docs/data.md and
// docs/explanation/terms.md), each once a slot, as the plan counts them:
// on each upstream day their calls are no more than the ids they asked
// over a batch, and one call a pass more for a pass's last, part batch
// (a pass a slot: --track-every for tracking, --every for the refresh).
// The days the daemon started, stopped, or met a failing upstream (a
// pass asked again) are let be.
func checkBatches(h *History) []string {
	type spend struct{ calls, ids int }
	days := map[string]map[time.Time]*spend{}
	for _, c := range h.Calls {
		if (c.Kind != KindStats && c.Kind != KindByID) || c.Status != http.StatusOK {
			continue
		}
		l := c.At.In(ingest.UpstreamZone)
		day := time.Date(l.Year(), l.Month(), l.Day(), 0, 0, 0, 0, ingest.UpstreamZone)
		if days[c.Kind] == nil {
			days[c.Kind] = map[time.Time]*spend{}
		}
		s := days[c.Kind][day]
		if s == nil {
			s = &spend{}
			days[c.Kind][day] = s
		}
		s.calls++
		s.ids += c.N + len(c.IDs)
	}
	var out []string
	for _, kind := range []string{KindStats, KindByID} {
		every, what, batch := h.TrackEvery, "tracking", jobs.TrackBatch
		if kind == KindByID {
			every, what, batch = h.Every, "the refresh", jobs.RefreshBatch
		}
		var over []string
		for day, s := range days[kind] {
			end := ingest.UpstreamReset(day)
			in := Interval{day, end}
			if every <= 0 || day.Before(h.Start) || end.After(h.End) || h.startIn(day.Add(-time.Nanosecond), end) || h.failingIn(in) ||
				h.downIn(day, end) || h.joinedIn(in) {
				continue
			}
			passes := int(end.Sub(day)/every) + 1
			if most := (s.ids+batch-1)/batch + passes; s.calls > most {
				over = append(over, fmt.Sprintf("%s: %d calls for %d videos, over %d (%d a call, and a part call in each of %d passes)",
					day.Format(time.DateOnly), s.calls, s.ids, most, batch, passes))
			}
		}
		if len(over) > 0 {
			slices.Sort(over)
			out = append(out, fmt.Sprintf("on %d of the upstream's days %s asked for videos in more calls than whole batches make: %s", len(over), what, firstFew(over)))
		}
	}
	return out
}

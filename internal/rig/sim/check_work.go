package sim

import (
	"fmt"
	"maps"
	"os"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/regions"
)

// checkTrackingStored: tracking stores the counts it reads (the
// statistics' time series, docs/contract.md), so a pass of it fails only
// for what the daemon cannot help, as the refresh does: the upstream
// failing, refusing or sending a wrong Date, or the disk full, while it
// ran (within its slot). A pass that fails otherwise spent the stats
// pool's units on counts it did not keep.
func checkTrackingStored(h *History) []string {
	var failed []time.Time
	for _, p := range h.Passes {
		if p.Entry == "track" && p.Status == ingest.StatusFailed && !h.failingIn(Interval{p.Started, p.Started.Add(h.TrackEvery)}) {
			failed = append(failed, p.Started)
		}
	}
	if len(failed) == 0 {
		return nil
	}
	return []string{fmt.Sprintf("track: %d passes failed with the upstream answering and the disk not full (first at %s): the counts they paid for were not kept",
		len(failed), failed[0].UTC().Format(time.RFC3339))}
}

// passLine is a chart pass's end as the daemon's log says it (LogEnd).
var passLine = regexp.MustCompile(`^time=(\S+) level=\S+ msg=pass region=(\S+) status=(\S+)`)

// checkRunsAsLogged: a chart pass the daemon's log says completed is a
// completed run in the database: the log's line and the run's row say
// the same of how a run ended (docs/contract.md, the runs' status), so
// that a run whose end was never stored is not said done. A run the
// database holds completed with no line of the daemon's is let be, as a
// second process's run of the daemon's chart may be. A chart's log before the first run the database keeps of it
// is of the runs the prune took.
func checkRunsAsLogged(h *History) []string {
	if h.Log == "" {
		return nil
	}
	data, err := os.ReadFile(h.Log)
	if err != nil {
		return []string{fmt.Sprintf("the daemon's log: %v", err)}
	}
	logged, stored, first := map[string]int{}, map[string]int{}, map[string]time.Time{}
	for _, r := range h.Runs { // in the order they started
		if !slices.ContainsFunc(h.Charts, func(c regions.Chart) bool { return c.Code == r.Region }) ||
			slices.ContainsFunc(h.Joins, func(j Join) bool { return j.Region == r.Region && j.Contains(r.Started) }) {
			continue
		}
		name := chartName(r.Region, r.Category)
		if _, ok := first[name]; !ok {
			first[name] = r.Started
		}
		if r.Status == ingest.StatusCompleted {
			stored[name]++
		}
	}
	passes := 0
	for _, line := range strings.Split(string(data), "\n") {
		m := passLine.FindStringSubmatch(line)
		if m != nil {
			passes++
		}
		if m == nil || m[3] != string(ingest.StatusCompleted) {
			continue
		}
		if at, err := time.Parse(time.RFC3339Nano, m[1]); err == nil && !at.Before(first[m[2]]) {
			logged[m[2]]++
		}
	}
	if passes == 0 {
		return nil // a log of the plans alone: a checker's own test
	}
	var out []string
	for _, name := range slices.Sorted(maps.Keys(logged)) {
		if logged[name] > stored[name] {
			out = append(out, fmt.Sprintf("%s: the log says %d passes completed, the database holds %d runs completed", name, logged[name], stored[name]))
		}
	}
	return out
}

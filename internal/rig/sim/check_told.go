package sim

import (
	"fmt"
	"net/http"
	"os"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/ingestworks/ingest"
)

// What the daemon tells of tracking, held to what tracking did: its line
// at each pass's end (docs/data.md: how many videos were read, tracked,
// out of those charted in the span, charted), and the plan's count of
// the videos a pass reads, which the plan spends the stats pool by.

var (
	// trackedLine is a tracking pass's end (jobs.Track's Entry), completed.
	trackedLine = regexp.MustCompile(`^time=(\S+) level=INFO msg=tracking .*status=completed tracked=(\d+) charted=(\d+) `)
	// planTracked is a plan line's count of the videos a tracking pass
	// reads (report.LogPlan).
	planTracked = regexp.MustCompile(`^time=(\S+) level=INFO msg=plan pool=\S+ .*tracked_videos=(\d+) `)
)

// trackedPass is a completed tracking pass as the log says it: when it
// ended, the videos it read and those charted in the span.
type trackedPass struct {
	at               time.Time
	tracked, charted int64
}

// checkTrackingTold: every completed tracking pass the log tells read no
// more videos than were charted in the span, and no more than the
// upstream answered it in that pass (the daemon's batchGetStats calls
// answered since the pass before); and in each life of the process
// started on a database its charts had filled, the plan's count of the
// videos a pass reads (what it spends the stats pool by) is within a
// factor of what the life's completed passes read on average: from two
// thirds to twice. A plan that counts tracking wrong plans the stats
// pool wrong, whatever it spends.
func checkTrackingTold(h *History) []string {
	if h.Log == "" || h.TrackFor == 0 {
		return nil
	}
	data, err := os.ReadFile(h.Log)
	if err != nil {
		return []string{fmt.Sprintf("the daemon's log: %v", err)}
	}
	var passes []trackedPass
	told := map[int]int64{} // the plan's count, by life
	for _, line := range strings.Split(string(data), "\n") {
		if m := trackedLine.FindStringSubmatch(line); m != nil {
			at, _ := time.Parse(time.RFC3339Nano, m[1])
			tracked, _ := strconv.ParseInt(m[2], 10, 64)
			charted, _ := strconv.ParseInt(m[3], 10, 64)
			passes = append(passes, trackedPass{at, tracked, charted})
		} else if m := planTracked.FindStringSubmatch(line); m != nil {
			at, _ := time.Parse(time.RFC3339Nano, m[1])
			n, _ := strconv.ParseInt(m[2], 10, 64)
			if i := h.lifeOf(at); i >= 0 {
				if _, ok := told[i]; !ok {
					told[i] = n
				}
			}
		}
	}
	var out []string
	if f := trackedAsAnswered(h, passes); f != "" {
		out = append(out, f)
	}
	return append(out, trackedAsPlanned(h, passes, told)...)
}

// lifeOf is the index in h.Starts of the life of the process t (as the
// log keeps it, to the millisecond) is in; -1 before the first.
func (h *History) lifeOf(t time.Time) int {
	i := -1
	for k, s := range h.Starts {
		if !s.Truncate(time.Millisecond).After(t) {
			i = k
		}
	}
	return i
}

// trackedAsAnswered is the passes that read more than was charted, or
// more than the upstream answered them, "" for none.
func trackedAsAnswered(h *History, passes []trackedPass) string {
	var wrong []string
	var from time.Time
	for _, p := range passes {
		var answered int64
		to := p.at.Add(time.Millisecond) // the log keeps milliseconds
		for _, c := range h.Calls {
			if c.Kind == KindStats && c.Worker == WorkerDaemon && c.Status == http.StatusOK && !c.Cut && c.At.After(from) && c.At.Before(to) {
				answered += int64(c.N)
			}
		}
		at := p.at.UTC().Format(time.RFC3339)
		switch {
		case p.tracked > p.charted:
			wrong = append(wrong, fmt.Sprintf("at %s tracked=%d of charted=%d", at, p.tracked, p.charted))
		case p.tracked > answered:
			wrong = append(wrong, fmt.Sprintf("at %s tracked=%d, where the upstream answered the counts of %d videos since the pass before", at, p.tracked, answered))
		}
		from = p.at
	}
	if len(wrong) == 0 {
		return ""
	}
	return fmt.Sprintf("%d of %d tracking passes said they read more videos than were charted in the span or than the upstream answered: %s",
		len(wrong), len(passes), firstFew(wrong))
}

// trackedAsPlanned holds each life's plan of the videos a tracking pass
// reads to what its completed passes read: only in a life whose start
// found a chart run completed (before, the plan counts the charts'
// depth), with two passes or more to average.
func trackedAsPlanned(h *History, passes []trackedPass, told map[int]int64) []string {
	var out []string
	for i, start := range h.Starts {
		plan, ok := told[i]
		if !ok || !h.chartedBefore(start) {
			continue
		}
		var sum, n int64
		for _, p := range passes {
			if h.lifeOf(p.at) == i {
				sum, n = sum+p.tracked, n+1
			}
		}
		if n < 2 {
			continue
		}
		if mean := float64(sum) / float64(n); mean*3 < float64(plan)*2 || mean > float64(plan)*2 {
			out = append(out, fmt.Sprintf("the life started at %s planned tracking at %d videos a pass, and its %d completed passes read %.0f on average: the plan counts tracking's reads wrong",
				start.UTC().Format(time.RFC3339), plan, n, mean))
		}
	}
	return out
}

// chartedBefore: a chart run completed before t, so that a plan made at
// t counts the videos charted in the database.
func (h *History) chartedBefore(t time.Time) bool {
	for _, r := range h.Runs {
		if r.Status == ingest.StatusCompleted && !r.Finished.IsZero() && r.Finished.Before(t) {
			return true
		}
	}
	return false
}

package sim

import (
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/ingestworks/ingest/fetch"
)

// retrySaidLine is the daemon's word that it sends a call's next attempt,
// whole: the attempt that failed, the wait it drew, and why it failed.
var retrySaidLine = regexp.MustCompile(`^time=(\S+) level=WARN msg="upstream attempt failed; retrying" op=(\S+) attempt=(\d+) delay=(\S+) .*err=(.*)$`)

// retrySaid is one such line.
type retrySaid struct {
	attempt int
	delay   time.Duration
	err     string
}

// checkRetried: what docs/operations/faults.md promises of a call the
// upstream fails for a moment (a 5xx, an answer cut short, a rate limit not
// "per day", a timeout, its bound, a connection refused): it is tried again, 4 attempts in all,
// and each retry is said as it goes, naming the attempt that failed, the
// wait it drew and why. Held on the daemon's calls, from the fake's record:
//
//   - a transient failure of attempt n below 4 is followed by the same call
//     within the most wait after attempt n and retrySlack (and a clock
//     read's budget), unless the process stopped about it, or the limiter
//     may have refused the retry (a wrong Date, the quota refused, the
//     disk full, the Redis stalled, a pool meant to be spent);
//   - no call follows the 4th transient failure as a 5th attempt;
//   - each retry is said at the millisecond it reached the upstream with
//     the attempt it follows, a wait between that attempt's least and most
//     and no longer than the gap, and the failure's status or kind (a
//     proxy's page by its status's text, as no message of the API's).
//
// A status the client takes for final (a proxy's 500 read as an answer), a
// count of attempts moved by one, or a wait or an attempt said otherwise
// than it was made, each leaves a pass failed, or an operator reading the
// wrong wait, where the promise says otherwise. The calls refused at dial
// are read with those the upstream answered (withUnreached).
func checkRetried(h *History) []string {
	said, err := h.retriesSaid()
	if err != nil {
		return []string{err.Error()}
	}
	calls := h.withUnreached()
	groups := map[string][]int{}
	for i, c := range calls {
		if c.Worker == WorkerDaemon {
			groups[callKey(c)] = append(groups[callKey(c)], i)
		}
	}
	var unretried, fifth, unsaid []string
	for _, idx := range groups {
		att := h.attempts(calls, idx)
		for i, k := range idx {
			f, n := calls[k], att[i]
			if !transient(f) {
				continue
			}
			var r *Call
			if i+1 < len(idx) && att[i+1] > n {
				r = &calls[idx[i+1]]
			}
			what := fmt.Sprintf("%s at %s (attempt %d, %s)", callKey(f), f.At.UTC().Format(time.RFC3339Nano), n, failure(f))
			switch {
			case r == nil && n < retryAttempts && !h.retryExcused(f.At, retryDue(f, n)):
				unretried = append(unretried, what)
			case r != nil && n >= retryAttempts:
				fifth = append(fifth, what+fmt.Sprintf(", asked again %s after it", r.Sent.Sub(f.At)))
			case r != nil && !saidAs(said[retryKey(opOf(r.Path), r.Sent)], n, r.Sent.Sub(f.At), f):
				unsaid = append(unsaid, what+fmt.Sprintf(", tried again %s after it, said %s", r.Sent.Sub(f.At), sayings(said[retryKey(opOf(r.Path), r.Sent)])))
			}
		}
	}
	var out []string
	if len(unretried) > 0 {
		out = append(out, fmt.Sprintf("%d calls the upstream failed for a moment were not tried again within their wait, with attempts left: %s", len(unretried), firstFew(unretried)))
	}
	if len(fifth) > 0 {
		out = append(out, fmt.Sprintf("%d calls were tried again after their %dth attempt failed: %s", len(fifth), retryAttempts, firstFew(fifth)))
	}
	if len(unsaid) > 0 {
		out = append(out, fmt.Sprintf("%d retries were not said as they went, with the attempt they follow, the wait they drew and why it failed: %s", len(unsaid), firstFew(unsaid)))
	}
	return out
}

// attempts is the attempt each of a call's idx (in calls) is, in order: one more
// than the one before when that one failed for a moment and this came
// within its retry's time (retryDue) in the same life, else the first.
func (h *History) attempts(calls []Call, idx []int) []int {
	att := make([]int, len(idx))
	for i := range idx {
		att[i] = 1
		if i == 0 {
			continue
		}
		f, r := calls[idx[i-1]], calls[idx[i]]
		if transient(f) && !h.startedIn(f.At, r.Sent) && !r.Sent.After(retryDue(f, att[i-1])) {
			att[i] = att[i-1] + 1
		}
	}
	return att
}

// retryDue is the latest a retry of f, attempt n, reaches the upstream:
// its most wait, retrySlack and a clock read's budget after f.
func retryDue(f Call, n int) time.Time {
	_, most := backoffAfter(min(n, retryAttempts))
	return f.At.Add(most + retrySlack + fetch.ClockBudget)
}

// retryExcused: a retry due after a failure at from, by to, may have been
// kept from going by what the promise names: a stop of the process, the
// history's end, the limiter refusing it (a wrong Date, the upstream's
// quota refused, a full disk, the Redis stalled, a pool the shape spends
// whole).
func (h *History) retryExcused(from, to time.Time) bool {
	stops := slices.ContainsFunc(h.Down, func(d Interval) bool { return !d.From.Before(from.Add(-termBound)) && !d.From.After(to) }) ||
		slices.ContainsFunc(h.Terms, func(s Term) bool { return !s.At.Before(from.Add(-termBound)) && !s.At.After(to) })
	return stops || to.After(h.End) || h.Exhaust || h.clockInDoubt(from) || h.refused(from) ||
		slices.ContainsFunc(h.Fulls, func(f Interval) bool { return !f.From.After(to) && !f.To.Before(from) }) ||
		h.stalledNear(from, to)
}

// saidAs: one of lines says the retry of attempt n, which failed as f did,
// with a wait it drew within the backoff and within gap.
func saidAs(lines []retrySaid, n int, gap time.Duration, f Call) bool {
	least, most := backoffAfter(n)
	why := []string{"HTTP " + strconv.Itoa(f.Status) + " "}
	switch {
	case f.Cut:
		why = []string{"malformed response"}
	case f.Deadline:
		why = []string{"deadline exceeded"}
	case f.Refused:
		why = []string{"connection refused"}
	case f.Proxy:
		// a proxy's page is named by its status's text, as no message of
		// the API's
		why = append(why, http.StatusText(f.Status))
	}
	return slices.ContainsFunc(lines, func(l retrySaid) bool {
		return l.attempt == n && l.delay >= least && l.delay <= most && l.delay <= gap+time.Millisecond &&
			!slices.ContainsFunc(why, func(w string) bool { return !strings.Contains(l.err, w) })
	})
}

// sayings is what lines say, for a finding.
func sayings(lines []retrySaid) string {
	if len(lines) == 0 {
		return "nothing"
	}
	var out []string
	for _, l := range lines {
		out = append(out, fmt.Sprintf("attempt=%d delay=%s err=%s", l.attempt, l.delay, l.err))
	}
	return strings.Join(out, " | ")
}

// retriesSaid is every retry the daemon's log says it sent, by retryKey,
// at the millisecond of its line and the next.
func (h *History) retriesSaid() (map[string][]retrySaid, error) {
	out := map[string][]retrySaid{}
	if h.Log == "" {
		return out, nil
	}
	err := eachLogLine([]string{h.Log}, func(_, line string) {
		m := retrySaidLine.FindStringSubmatch(line)
		if m == nil {
			return
		}
		at, err := time.Parse(time.RFC3339Nano, m[1])
		n, err2 := strconv.Atoi(m[3])
		d, err3 := time.ParseDuration(m[4])
		if err != nil || err2 != nil || err3 != nil {
			return
		}
		s := retrySaid{n, d, m[5]}
		for _, k := range []string{retryKey(m[2], at), retryKey(m[2], at.Add(time.Millisecond))} {
			out[k] = append(out[k], s)
		}
	})
	return out, err
}

package sim

import (
	"fmt"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/ingestworks/ingest/fetch"
)

// The retries' waits as docs/operations/faults.md promises them: after a
// call's attempt n fails for a transient reason (a 5xx, an answer cut
// short, its bound), the next comes between half and all of retryBase x
// 2^(n-1), capped at retryCap; after retryAttempts the call fails.
const (
	retryBase     = 500 * time.Millisecond
	retryCap      = 30 * time.Second
	retryAttempts = 4
	// retrySlack is what an attempt may take besides its wait before it
	// reaches the upstream: the limiter's decision, a wait for the
	// database's writer (a clock read asked meanwhile adds its own budget)
	retrySlack = 5 * time.Second
)

// backoffAfter is the least and the most wait after a call's attempt n failed.
func backoffAfter(n int) (least, most time.Duration) {
	most = min(retryBase<<min(n-1, 20), retryCap)
	return most / 2, most
}

// retryLine is the daemon's word that it sends a call's next attempt, said
// as it sends it (fetch: once the limiter let it through).
var retryLine = regexp.MustCompile(`^time=(\S+) level=WARN msg="upstream attempt failed; retrying" op=(\S+) attempt=(\d+)`)

// checkRetries: a call's attempt that follows a transient failure of the
// same call (the same request) by the same worker comes no sooner than the
// least wait after that attempt (backoffAfter), read from the fake's calls
// alone, and one the daemon's log says is a retry no later than the most
// wait and retrySlack (and a clock read's budget when the upstream's time
// was asked meanwhile) after it: the upstream asks for an exponential
// backoff, and a wait many times the documented one holds a pass, and the
// stop after it, for nothing. A life of the process starting between the
// two, or the Redis stalling about them, ends the call.
func checkRetries(h *History) []string {
	logged, err := h.loggedRetries()
	if err != nil {
		return []string{err.Error()}
	}
	groups := map[string][]int{}
	for i, c := range h.Calls {
		k := c.Worker + " " + callKey(c)
		groups[k] = append(groups[k], i)
	}
	var soon, late []string
	for _, idx := range groups {
		slices.SortStableFunc(idx, func(a, b int) int { return h.Calls[a].Sent.Compare(h.Calls[b].Sent) })
		attempt := make([]int, len(idx))
		for i := range idx {
			attempt[i] = 1
			if i == 0 {
				continue
			}
			f, r := h.Calls[idx[i-1]], h.Calls[idx[i]]
			n := attempt[i-1]
			if !transient(f) || n >= retryAttempts || h.startedIn(f.At, r.Sent) {
				continue
			}
			least, most := backoffAfter(n)
			gap := r.Sent.Sub(f.At)
			said := r.Worker == WorkerDaemon && logged[retryKey(opOf(r.Path), r.Sent)]
			slack := retrySlack
			if slices.ContainsFunc(h.Asks, func(a time.Time) bool { return !a.Before(f.At) && !a.After(r.Sent) }) {
				slack += fetch.ClockBudget
			}
			if gap <= most+slack || said {
				attempt[i] = n + 1
			}
			what := fmt.Sprintf("%s at %s, %s after attempt %d failed (%s)", callKey(r), r.Sent.UTC().Format(time.RFC3339Nano), gap, n, failure(f))
			switch {
			case gap < least:
				soon = append(soon, what+fmt.Sprintf(", sooner than %s", least))
			case said && gap > most+slack && !h.stalledNear(f.At, r.Sent):
				late = append(late, what+fmt.Sprintf(", later than %s and %s", most, slack))
			}
		}
	}
	var out []string
	if len(soon) > 0 {
		out = append(out, fmt.Sprintf("%d attempts came sooner after a transient failure of the same call than the retry's least wait: %s", len(soon), firstFew(soon)))
	}
	if len(late) > 0 {
		out = append(out, fmt.Sprintf("%d retries the daemon said came later after the failure than the retry's wait: %s", len(late), firstFew(late)))
	}
	return out
}

// transient: the client tries c again, if its attempts are not spent: a
// 5xx, an answer cut short, its bound reached before the answer, a
// proxy's rate limit or timeout.
func transient(c Call) bool {
	return c.Status >= 500 || c.Cut || c.Deadline || proxied(c) || c.Refused
}

// failure says how c failed.
func failure(c Call) string {
	switch {
	case c.Cut:
		return "an answer cut short"
	case c.Deadline:
		return "its bound reached"
	case c.Refused:
		return "refused at dial"
	}
	return "HTTP " + strconv.Itoa(c.Status)
}

// callKey names c's request: the same key is the same call asked again.
func callKey(c Call) string {
	switch c.Kind {
	case KindChart, KindSearch:
		return strings.Join([]string{c.Kind, c.Region, c.Category, c.Page}, " ")
	case KindCategories:
		return c.Kind + " " + c.Region
	case KindByID, KindDetails:
		return c.Kind + " " + strings.Join(c.IDs, ",")
	case KindStats:
		return fmt.Sprintf("%s %s+%d", c.Kind, c.First, c.N)
	}
	return c.Path
}

// opOf is the operation a keyed request's path names, as the daemon's
// log names it (videos.list, videos.batchGetStats).
func opOf(path string) string {
	res := strings.TrimPrefix(path, "/youtube/v3/")
	if r, m, ok := strings.Cut(res, ":"); ok {
		return r + "." + m
	}
	return res + ".list"
}

// retryKey is a retry by its operation and the millisecond it was sent,
// as the log's time keeps it.
func retryKey(op string, at time.Time) string {
	return op + " " + strconv.FormatInt(at.UnixMilli(), 10)
}

// loggedRetries is every retry the daemon's log says it sent, by
// retryKey, at the millisecond of its line and the next (the line is
// said just before the request goes).
func (h *History) loggedRetries() (map[string]bool, error) {
	out := map[string]bool{}
	if h.Log == "" {
		return out, nil
	}
	data, err := os.ReadFile(h.Log)
	if err != nil {
		return nil, fmt.Errorf("the daemon's log: %v", err)
	}
	for _, line := range strings.Split(string(data), "\n") {
		m := retryLine.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		at, err := time.Parse(time.RFC3339Nano, m[1])
		if err != nil {
			continue
		}
		out[retryKey(m[2], at)], out[retryKey(m[2], at.Add(time.Millisecond))] = true, true
	}
	return out, nil
}

// startedIn: a life of the process started in (from, to].
func (h *History) startedIn(from, to time.Time) bool {
	return slices.ContainsFunc(h.Starts, func(s time.Time) bool { return s.After(from) && !s.After(to) })
}

// stalledNear: the Redis stalled from a minute before from to to, where
// a decision's wait is the stall's.
func (h *History) stalledNear(from, to time.Time) bool {
	return slices.ContainsFunc(h.Stalls, func(s time.Time) bool { return !s.Before(from.Add(-time.Minute)) && !s.After(to) })
}

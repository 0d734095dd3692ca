package sim

import (
	"fmt"
	"net/http"
	"os"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/ingestworks/ingest/jobs"
)

// warnLine is a line of the daemon's log at WARN or ERROR: when.
var warnLine = regexp.MustCompile(`^time=(\S+) level=(?:WARN|ERROR) `)

// panicked is a recovered panic as the daemon logs it: the runner's
// "... panicked" line with its panic= attribute, and the pass or run it
// failed, whose error reads "panic: ...".
var panicked = regexp.MustCompile(`panic:|msg="[^"]*panicked[^"]*"| panic=`)

// explanation is a fault of the simulated world that explains a WARN or
// ERROR line saying says (in its message or its error): by holds when
// that fault was active at the line's time.
type explanation struct {
	says *regexp.Regexp
	by   func(h *History, at time.Time) bool
}

// explained is every WARN and ERROR the daemon logs for a fault the
// simulation made, by what the line says of its cause. A line none of
// these explains, or one logged when no fault it names was active, is a
// bug whatever the world did: the daemon's own account of what went
// wrong is held to the world's.
var explained = []explanation{
	// A stop cancels what runs: a wait, a write or a lock in flight ends
	// with the context, and says so, until the process has stopped; a
	// page or a run that outlives the stop's bound is left, said so.
	{regexp.MustCompile(`context canceled|stopping now|stopping without them`), (*History).stopping},
	// A wrong Date: nothing is decided until a reading asked again, at
	// most a minute after the Date is right again, agrees (blocks).
	{regexp.MustCompile(`the limiter's clock disagrees with the upstream's`), (*History).skewed},
	// A 503 or a cut answer, as the fake kept it: each attempt, the pass
	// that gave up, and the backoff it starts.
	{regexp.MustCompile(`HTTP (5\d\d|429|408) |malformed response from the upstream`), (*History).upstreamFailed},
	// The upstream cut off: each attempt refused at dial, the pass that
	// gave up, and the backoff it starts (unreached.go).
	{regexp.MustCompile(`connection refused`), (*History).cutOff},
	// The full disk names itself (docs/operations/faults.md); SQLite's
	// own words are the backoff's cause.
	{regexp.MustCompile(`the disk is full|database or disk is full`), (*History).diskFull},
	// The upstream's refusal of its daily quota, and the limiter's block
	// of the pools until their reset, which the day's catalogue meets.
	{regexp.MustCompile(`upstream quota exhausted|refused until`), (*History).refused},
	// The limiter's own refusal, in a shape made to spend the default
	// pool (Exhaust): a start's catalogue read then meets a spent pool,
	// and the day's catalogue is the stored one, said so.
	{regexp.MustCompile(`quota: \S+ refused until`), (*History).exhausting},
	// A start that meets the upstream failing, refusing, sending a wrong
	// Date or too slow to answer in time (SlowStart) plans on the stored
	// catalogue after --start-timeout.
	{regexp.MustCompile(`not read from the upstream within --start-timeout`), (*History).upstreamTrouble},
	// A start within a backoff reads it from the database and says it
	// again: up to the longest backoff after the failure it began at.
	{regexp.MustCompile(`backing off .*, as the database keeps it`), (*History).backingOff},
	// Charts configured past the pool: the plan says at start what it
	// cannot hold and what it drops (docs/explanation/pacing.md).
	{regexp.MustCompile(`cannot fit the quota|the pool cannot hold tier|the plan drops what the budget cannot hold`), (*History).short},
	// The simulation's Redis keeps nothing on disk: its loss is the
	// world's (RedisLoss), and the daemon warns of it at start.
	{regexp.MustCompile(`keeps no data across a restart`), (*History).onRedis},
	// The loss itself, found by the limiter's next beat or decision.
	{regexp.MustCompile(`the limiter lost data`), (*History).lost},
	// A stall of the Redis past the limiter's timeout: the decisions it
	// gave up on go ahead unmetered, said at the stall's moment
	// (stallAnswer, as virtual time stands still while it lasts).
	{regexp.MustCompile(`quota limiter (still )?unreachable|i/o timeout`), (*History).stalled},
	// A worker back from a copy of its database counts the calls it made
	// there, which its limiter's log lacks (docs/operations/growing.md).
	{regexp.MustCompile(`a worker ran on a copy of this database|the calls of its own ledger that its log lacked`), (*History).cameBack},
}

// checkLog: the daemon's log holds no recovered panic, which is a bug
// whatever the world did, and every WARN or ERROR line in it is
// explained by a fault of the world active at its time (explained).
func checkLog(h *History) []string {
	if h.Log == "" {
		return nil // a history made by hand, with no daemon's log
	}
	data, err := os.ReadFile(h.Log)
	if err != nil {
		return []string{fmt.Sprintf("the daemon's log: %v", err)}
	}
	var panics, unexplained []string
	for _, line := range strings.Split(string(data), "\n") {
		m := warnLine.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		if panicked.MatchString(line) {
			panics = append(panics, cut(line))
			continue
		}
		at, err := time.Parse(time.RFC3339Nano, m[1])
		if err != nil || !slices.ContainsFunc(explained, func(e explanation) bool { return e.says.MatchString(line) && e.by(h, at) }) {
			unexplained = append(unexplained, cut(line))
		}
	}
	var out []string
	if len(panics) > 0 {
		out = append(out, fmt.Sprintf("the daemon's log holds %d lines of a recovered panic: %s", len(panics), firstFew(panics)))
	}
	if len(unexplained) > 0 {
		out = append(out, fmt.Sprintf("%d WARN or ERROR lines of the daemon's log are explained by no fault of the world at their time: %s",
			len(unexplained), firstFew(unexplained)))
	}
	return out
}

// cut is a log line short enough to read in a finding.
func cut(line string) string {
	if len(line) > 240 {
		return line[:240] + "..."
	}
	return line
}

// lineSlack is how far past a fault's end a line it explains may be
// logged: the log keeps milliseconds, and work running at once reads a
// failure answered at the same moment (inFlight).
const lineSlack = inFlight

// within: t is in one of spans, each taken lineSlack longer.
func within(spans []Interval, t time.Time) bool {
	return slices.ContainsFunc(spans, func(i Interval) bool { return Interval{i.From, i.To.Add(lineSlack)}.Contains(t) })
}

// stopping: t is between a stop of the process (a restart, a SIGTERM,
// the history's end) and the longest it may take to stop (termBound).
func (h *History) stopping(t time.Time) bool {
	var stops []Interval
	for _, d := range h.Down {
		stops = append(stops, Interval{d.From, d.From.Add(termBound)})
	}
	for _, s := range h.Terms {
		stops = append(stops, Interval{s.At, s.Stopped})
	}
	return within(append(stops, Interval{h.End, h.End.Add(termBound)}), t)
}

// skewed: t is in a wrong Date or a minute after it (blocks).
func (h *History) skewed(t time.Time) bool {
	var spans []Interval
	for _, s := range h.Skews {
		spans = append(spans, Interval{s.From, s.To.Add(time.Minute)})
	}
	return within(spans, t)
}

// retryWait is how long after a failed answer the client says it: a
// retry is announced once its wait is over (fetch's longest) and the
// limiter let it through.
const retryWait = 30*time.Second + lineSlack

// upstreamFailed: the fake answered a call with a 503 or cut it short at
// most retryWait before t. The fake's own record, not the nemesis's
// bursts: a burst of cut answers armed while 503s are still due, or
// while the quota is refused, cuts the 200s that come after them.
func (h *History) upstreamFailed(t time.Time) bool {
	return within(h.failedAnswers(retryWait), t)
}

// failedAnswers are the moments the fake answered a call with a 503 or cut
// it short, each taken after as a span.
func (h *History) failedAnswers(after time.Duration) []Interval {
	var out []Interval
	for _, c := range h.Calls {
		if c.Status >= http.StatusInternalServerError || c.Cut || proxied(c) {
			out = append(out, Interval{c.At, c.At.Add(after)})
		}
	}
	for _, c := range h.Unreached {
		out = append(out, Interval{c.At, c.At.Add(after)})
	}
	return out
}

// upstreamTrouble: the upstream failed an answer at most retryWait
// before t, refused its quota or sent a wrong Date at t.
func (h *History) upstreamTrouble(t time.Time) bool {
	return h.upstreamFailed(t) || h.refused(t) || h.skewed(t) || within(h.Slow, t)
}

// diskFull: t is in a spell of the full disk.
func (h *History) diskFull(t time.Time) bool { return within(h.Fulls, t) }

// refused: t is between the upstream's refusal of its daily quota and the
// default pool's reset after the refusal ended (blocks).
func (h *History) refused(t time.Time) bool {
	var spans []Interval
	for _, r := range h.Refusals {
		spans = append(spans, Interval{r.From, h.reset(r.To)})
	}
	return within(spans, t)
}

// backingOff: a failure of the upstream or of the disk ended at most the
// daemon's longest backoff before t.
func (h *History) backingOff(t time.Time) bool {
	var spans []Interval
	for _, f := range append(h.failedAnswers(0), h.Fulls...) {
		spans = append(spans, Interval{f.From, f.To.Add(jobs.MaxBackoff)})
	}
	return within(spans, t)
}

// exhausting: the shape's workload is meant to reach the default pool's
// limit, where the limiter refuses by design.
func (h *History) exhausting(time.Time) bool { return h.Exhaust }

// short: the configured charts want more of the default pool than it
// holds.
func (h *History) short(time.Time) bool { return h.scarce() }

// onRedis: the daemon's limiter is the simulation's Redis.
func (h *History) onRedis(time.Time) bool { return h.Redis != "" }

// lossFound is how long after the Redis lost its data the daemon may say
// so: the limiter's beat, a few seconds, or its next decision finds it.
const lossFound = time.Minute

// lost: the Redis lost its data at most lossFound before t.
func (h *History) lost(t time.Time) bool {
	var spans []Interval
	for _, l := range h.Losses {
		spans = append(spans, Interval{l, l.Add(lossFound)})
	}
	return within(spans, t)
}

// cameBack: the daemon started again on its database, back from a copy
// (CopyAt), at most a minute before t: its start reads the copy's ledger.
func (h *History) cameBack(t time.Time) bool {
	var spans []Interval
	for _, m := range h.Moved {
		spans = append(spans, Interval{m.To, m.To.Add(moveDown + time.Minute)})
	}
	return within(spans, t)
}

// stalled: the Redis stalled at most stallAnswer before t.
func (h *History) stalled(t time.Time) bool {
	var spans []Interval
	for _, s := range h.Stalls {
		spans = append(spans, Interval{s, s.Add(stallAnswer)})
	}
	return within(spans, t)
}

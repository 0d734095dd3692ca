package sim

import (
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/ingestworks/ingest"
)

// clockSaid is what a refusal on the clock says of the two clocks: which
// clock, what it reads, how far from the upstream's, and which way.
var clockSaid = regexp.MustCompile(`^time=(\S+) .*` + regexp.QuoteMeta(ingest.ErrClockSkew.Error()) +
	`: (.+?) reads (\S+), (\S+) (ahead of|behind) the upstream's: nothing is decided on a wrong day;`)

// checkClockSaid: a decision refused on the clock says which clock reads
// what, and how far ahead of or behind the upstream's it is
// (docs/operations/faults.md, the line an operator reads): the figure an
// operator sets a clock by, or tells a proxy's cached Date by. In the
// simulation every clock but the upstream's is right, and the upstream's
// Date was SkewBy behind: each refusal says its clock reads the time of
// its decision (a second's truncation, a pass's line said up to a stagger
// step after it), that far ahead of the upstream's, within the Date's
// whole seconds. A sign, a unit or a pair of words traded in the sentence
// tells the operator to move a right clock the wrong way.
func checkClockSaid(h *History) []string {
	var wrong []string
	n := 0
	err := eachLogLine([]string{h.Log, filepath.Join(h.Dir, "beside.log")}, func(file, line string) {
		if !strings.Contains(line, ingest.ErrClockSkew.Error()) {
			return
		}
		n++
		if why := h.clockSaidWrong(line); why != "" {
			wrong = append(wrong, fmt.Sprintf("%s (%s): %s", why, file, cut(line)))
		}
	})
	if err != nil {
		return []string{err.Error()}
	}
	if len(wrong) == 0 {
		return nil
	}
	return []string{fmt.Sprintf("%d of %d refusals on the clock say otherwise than the clocks were: %s", len(wrong), n, firstFew(wrong))}
}

// clockSaidWrong is what line, a refusal on the clock, says wrong of the
// clocks, "" for nothing.
func (h *History) clockSaidWrong(line string) string {
	m := clockSaid.FindStringSubmatch(line)
	if m == nil {
		return "no clock, time, gap and way read in it"
	}
	at, err := time.Parse(time.RFC3339Nano, m[1])
	reads, err2 := time.Parse(time.RFC3339, m[3])
	gap, err3 := time.ParseDuration(m[4])
	if err != nil || err2 != nil || err3 != nil {
		return fmt.Sprintf("%q reads %q, %q: not a time and a duration", m[2], m[3], m[4])
	}
	skew, ok := h.skewAt(at)
	switch {
	case !ok:
		return "" // checkLog holds a refusal to a wrong Date
	case m[5] != "ahead of":
		return fmt.Sprintf("%s %s the upstream's, whose Date was %s behind", m[2], m[5], skew)
	case gap < skew-2*time.Second || gap > skew+2*time.Second:
		return fmt.Sprintf("%s ahead of the upstream's, whose Date was %s behind", gap, skew)
	case reads.After(at.Add(time.Second)) || reads.Before(at.Add(-saidLate)):
		return fmt.Sprintf("%s reads %s, said at %s", m[2], m[3], at.UTC().Format(time.RFC3339Nano))
	}
	return ""
}

// saidLate is how long after its decision a refusal may be said: at the
// pass's end, its pages and the stagger's step after.
const saidLate = 10 * time.Minute

// skewAt is how far behind the Date was in the latest wrong Date begun at
// or before t.
func (h *History) skewAt(t time.Time) (time.Duration, bool) {
	var skew time.Duration
	ok := false
	for i, s := range h.Skews {
		if !s.From.After(t) && i < len(h.SkewBy) {
			skew, ok = h.SkewBy[i], true
		}
	}
	return skew, ok
}

package sim

import (
	"fmt"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
)

// shareLine is the daemon's line when the workers spending in a pool grow
// (pace's share): when, the pool and the workers it counts.
var shareLine = regexp.MustCompile(`^time=(\S+) level=INFO msg="pace: workers of other databases spend in the pool's window; counting on a share of it" pool=(\S+) workers=(\d+) `)

// checkShareSaid: a worker of another database joining the daemon's key
// is said in the daemon's log within an --every of its first run, as
// docs/explanation/pacing.md promises ("Each change is one line"): the
// line that the daemon counts on a share of the default pool, with two
// workers, the daemon and the peer. Only the first peer of the history is
// held, and only when the daemon ran all through that --every and a minute
// more (a plan made at a start counts the peer too, but the line is said
// when the count changes, which a start cannot tell), before the history
// ended.
func checkShareSaid(h *History) []string {
	if len(h.Peers) == 0 || len(h.Peers[0].Runs) == 0 || h.Log == "" {
		return nil
	}
	from := h.Peers[0].Runs[0].From
	in := Interval{from, from.Add(h.Every + time.Minute)}
	if in.To.After(h.End) || slices.ContainsFunc(h.Down, func(d Interval) bool { return !d.From.After(in.To) && !in.From.After(d.To) }) {
		return nil
	}
	data, err := os.ReadFile(h.Log)
	if err != nil {
		return []string{fmt.Sprintf("the daemon's log: %v", err)}
	}
	var said []string
	for _, line := range strings.Split(string(data), "\n") {
		m := shareLine.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		at, _ := time.Parse(time.RFC3339Nano, m[1])
		workers, _ := strconv.Atoi(m[3])
		if in.Contains(at) && m[2] == "default" && workers == 2 {
			return nil
		}
		said = append(said, fmt.Sprintf("%s pool=%s workers=%s", m[1], m[2], m[3]))
	}
	return []string{fmt.Sprintf("a worker of another database ran its first pass on the key at %s, and the daemon's log did not say within %s that it counts on a share of pool default with 2 workers (its share lines: %s)",
		from.UTC().Format(time.RFC3339), in.To.Sub(in.From), orNone(said))}
}

// orNone is the lines joined, or "none".
func orNone(lines []string) string {
	if len(lines) == 0 {
		return "none"
	}
	return strings.Join(lines, "; ")
}

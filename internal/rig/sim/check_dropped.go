package sim

import (
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// dropLine is the pacer's line for a plan that drops entries or takes
// them back: when, which, how many, and the entries it names.
var dropLine = regexp.MustCompile(`^time=(\S+) level=\S+ msg="pace: the plan (drops|takes back) [^"]*" (?:dropped|back)=(\d+) entries=("[^"]*"|\S*)`)

// checkDropsSaid: the pacer says a plan that drops entries, or takes
// back entries it dropped, in one line, and a plan that changes nothing
// logs nothing (docs/explanation/pacing.md): each such line names at
// least one entry, and an entry taken back is one a line before dropped
// (the hold a restarted worker reads is the one its last line said).
// The first few entries are named: one dropped past them is unknown.
// A region's own chart taken back is not taken back again within the
// pools' longest window: the plans hold one dropped again since until
// they have kept it for that window, so that it does not go in and out
// of the plan, older than the bound each time it is back; the hold
// survives a restart.
func checkDropsSaid(h *History) []string {
	if h.Log == "" {
		return nil
	}
	data, err := os.ReadFile(h.Log)
	if err != nil {
		return []string{fmt.Sprintf("the daemon's log: %v", err)}
	}
	var window time.Duration
	for _, p := range h.Costs.Pools {
		window = max(window, p.Window)
	}
	own := map[string]bool{}
	for _, c := range h.Charts {
		own[c.Code] = true
	}
	var out []string
	back := map[string]time.Time{} // when each own chart was last taken back
	dropped := map[string]bool{}
	unknown := false // a line named only the first few it dropped
	for _, line := range strings.Split(string(data), "\n") {
		m := dropLine.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		n, _ := strconv.Atoi(m[3])
		list := strings.Trim(m[4], `"`)
		if n == 0 {
			out = append(out, fmt.Sprintf("at %s the pacer said the plan %s no entry: a plan that changes nothing logs nothing", m[1], m[2]))
			continue
		}
		more := strings.Contains(list, " and ")
		list, _, _ = strings.Cut(list, " and ")
		for _, e := range strings.Split(list, ",") {
			switch {
			case m[2] == "drops":
				dropped[e] = true
			case !dropped[e] && !unknown:
				out = append(out, fmt.Sprintf("at %s the pacer said the plan takes back %s, which no line before said it dropped", m[1], e))
			default:
				delete(dropped, e)
			}
			at, err := time.Parse(time.RFC3339Nano, m[1])
			if m[2] == "drops" || !own[e] || err != nil {
				continue
			}
			if last, ok := back[e]; ok && at.Sub(last) < window {
				out = append(out, fmt.Sprintf("at %s the pacer said the plan takes back %s, taken back at %s, within the pools' longest window (%s): a chart dropped again is held until the plans kept it that long",
					m[1], e, last.UTC().Format(time.RFC3339), window))
			}
			back[e] = at
		}
		if m[2] == "drops" && more {
			unknown = true
		}
	}
	return out
}

package sim

import (
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"
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
func checkDropsSaid(h *History) []string {
	if h.Log == "" {
		return nil
	}
	data, err := os.ReadFile(h.Log)
	if err != nil {
		return []string{fmt.Sprintf("the daemon's log: %v", err)}
	}
	var out []string
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
		}
		if m[2] == "drops" && more {
			unknown = true
		}
	}
	return out
}

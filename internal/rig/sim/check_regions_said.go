package sim

import (
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"

	"github.com/ingestworks/ingest/regions"
)

// regionsSaid is a line's region= or regions= attribute whose value is
// one or more region codes, each with its category after a slash or not.
var regionsSaid = regexp.MustCompile(` (regions?)=([A-Z]{2}(?:/\d+)?(?:,[A-Z]{2}(?:/\d+)?)*)(?: |$)`)

// checkRegionsSaid: the daemon's log names, in its region and regions
// attributes, only regions it runs (--regions): its passes, its plan and
// its catalogue speak of its charts. A line naming others (the region
// catalogue's every region to a daemon not at --regions all, which
// takes none of them at its next start) says what the daemon is not
// doing. A daemon at --regions all runs every region the catalogue
// names, so nothing holds it.
func checkRegionsSaid(h *History) []string {
	if h.Log == "" || h.Regions == "all" {
		return nil
	}
	data, err := os.ReadFile(h.Log)
	if err != nil {
		return []string{fmt.Sprintf("the daemon's log: %v", err)}
	}
	runs := func(code string) bool {
		return slices.ContainsFunc(h.Charts, func(c regions.Chart) bool { return c.Code == code })
	}
	var wrong []string
	n := 0
	for _, line := range strings.Split(string(data), "\n") {
		for _, m := range regionsSaid.FindAllStringSubmatch(line, -1) {
			var others []string
			for _, chart := range strings.Split(m[2], ",") {
				if code, _, _ := strings.Cut(chart, "/"); !runs(code) {
					others = append(others, code)
				}
			}
			if len(others) > 0 {
				n++
				wrong = append(wrong, fmt.Sprintf("%s=%s in %s", m[1], firstOf(others), cut(line)))
			}
		}
	}
	if n == 0 {
		return nil
	}
	return []string{fmt.Sprintf("%d lines of the daemon's log name regions it does not run: %s", n, firstFew(wrong))}
}

// firstOf is the first three codes, and how many more.
func firstOf(codes []string) string {
	if len(codes) <= 3 {
		return strings.Join(codes, ",")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(codes[:3], ","), len(codes)-3)
}

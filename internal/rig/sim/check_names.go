package sim

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/ingestworks/ingest/regions"
)

// checkRegionsNamed: every region /api/v1/quota lists carries its name in
// the region catalogue, and only a code the catalogue names carries one
// (docs/contract.md, `ingest report --json`: `name`, left out for a code
// the catalogue does not name). The fake's catalogue is the built-in one,
// whether the daemon read it or fell back on it, so that is the name due.
func checkRegionsNamed(h *History) []string {
	var wrong []string
	reads := 0
	for _, rd := range h.Operator {
		if rd.Down || rd.Err != "" || len(rd.Names) == 0 {
			continue
		}
		reads++
		at := rd.At.UTC().Format(time.RFC3339)
		for _, code := range slices.Sorted(maps.Keys(rd.Names)) {
			got := rd.Names[code]
			region, _, _ := strings.Cut(code, "/")
			want := ""
			if r, ok := regions.Builtin.Find(region); ok {
				want = r.Name
			}
			if got != want {
				wrong = append(wrong, fmt.Sprintf("at %s %s named %q, where the catalogue names it %q", at, code, got, want))
			}
		}
	}
	if len(wrong) == 0 {
		return nil
	}
	return []string{fmt.Sprintf("%d regions /api/v1/quota listed in %d answers were not named as the region catalogue names them: %s",
		len(wrong), reads, firstFew(wrong))}
}

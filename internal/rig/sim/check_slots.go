package sim

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// checkSlotsServed: /metrics names each chart the daemon runs, and only
// those, with the period of its slots (its tier's --every), as
// docs/reference/metrics.md says: the alert on a late chart reads its
// age against that period, so a chart missing there is never late and
// a name that is no chart is an alert on nothing.
func checkSlotsServed(h *History) []string {
	want := map[string]time.Duration{}
	cats := h.Categories
	if len(cats) == 0 {
		cats = []string{""}
	}
	for _, c := range h.Charts {
		for _, cat := range cats {
			want[chartName(c.Code, cat)] = c.Period(h.Every)
		}
	}
	var out []string
	for _, p := range h.Plans {
		if p.Slots == nil {
			continue
		}
		at := p.At.UTC().Format(time.RFC3339)
		var missing, wrong, other []string
		for name, every := range want {
			got, ok := p.Slots[name]
			switch {
			case !ok:
				missing = append(missing, name)
			case got != every:
				wrong = append(wrong, fmt.Sprintf("%s at %s, not %s", name, got, every))
			}
		}
		for name := range p.Slots {
			if _, ok := want[name]; !ok {
				other = append(other, name)
			}
		}
		for _, f := range []struct {
			what  string
			names []string
		}{{"names no slots of the charts", missing}, {"says the slots of", wrong}, {"names slots of what is no chart", other}} {
			if len(f.names) > 0 {
				slices.Sort(f.names)
				out = append(out, fmt.Sprintf("at %s /metrics' ingest_chart_slot_seconds %s: %s", at, f.what, strings.Join(f.names, ", ")))
			}
		}
	}
	return out
}

package sim

import (
	"strings"
	"testing"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/costs"
	"github.com/ingestworks/ingest/report"
)

func TestCheckFindsAReportAfterTheRunThatShowsItsOwnCosts(t *testing.T) {
	scarce := scarceAt(t, 400, 50).Costs
	note := "this command's costs (" + costs.Hash(costs.Default()) + ") are not the ones the schedule's run spends by (" + costs.Hash(scarce) + ")"
	shownBy := func(c *ingest.Costs) []report.PoolJSON {
		var out []report.PoolJSON
		for _, p := range c.Pools {
			out = append(out, report.PoolJSON{Name: p.Name, Limit: p.Limit, Reserve: p.Reserve})
		}
		return out
	}
	for _, c := range []struct {
		name  string
		run   *ingest.Costs
		after After
		want  string
	}{
		{"the run's pools, said", scarce, After{Asked: true, Note: note, Pools: shownBy(scarce)}, ""},
		{"the built-in costs, nothing to say", costs.Default(), After{Asked: true, Pools: shownBy(costs.Default())}, ""},
		{"not asked", scarce, After{}, ""},
		{"failed", scarce, After{Asked: true, Err: "read the schedule: boom"}, "with the built-in costs, failed: read the schedule"},
		{"the command's pools", scarce, After{Asked: true, Pools: shownBy(costs.Default())},
			"showed pool default at limit 10000 reserve 500; the run's costs, which it recorded, have 400 and 50"},
		{"the run's pools, unsaid", scarce, After{Asked: true, Pools: shownBy(scarce)}, "did not say they are not the run's (" + costs.Hash(scarce) + ")"},
	} {
		h := &History{After: c.after}
		h.Costs = c.run
		f := checkReportAfter(h)
		if c.want == "" && len(f) != 0 || c.want != "" && (len(f) == 0 || !strings.Contains(f[0], c.want)) {
			t.Errorf("%s: %q, want %q", c.name, f, c.want)
		}
	}
}

package sim

// The operator's report after the run, on the host, with the costs file
// the binary carries (no --costs), as an operator reads a daemon that ran
// on a file of its own: docs/operations.md promises that a command whose
// costs are not the ones the run recorded says so, naming both by their
// hash, and shows the pools by the recorded costs. What the daemon records
// of itself is read back by every view but its own --listen; the rule
// reads it the way those views do.

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strings"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/costs"
	"github.com/ingestworks/ingest/report"
)

// After is `ingest report --json` asked on the host after the daemon's
// last life, with the built-in costs: its error ("" for none), its
// costs_note, and the pools it showed.
type After struct {
	Asked bool
	Err   string
	Note  string
	Pools []report.PoolJSON
}

// reportAfter reads the report as an operator without the run's costs
// file does; what it logs is the command's own, not the daemon's log.
func reportAfter(dsn string, s Shape) After {
	s.Costs = costs.Default()
	rep, err := readReport(context.Background(), dsn, s, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		return After{Asked: true, Err: err.Error()}
	}
	j := rep.JSON()
	return After{Asked: true, Note: j.CostsNote, Pools: j.Pools}
}

// checkReportAfter: the report after the run, asked with the built-in
// costs, showed each pool as the run's costs have it, and, when those are
// not the built-in ones, said so naming the run's by its hash.
func checkReportAfter(h *History) []string {
	a := h.After
	if !a.Asked {
		return nil
	}
	if a.Err != "" {
		return []string{fmt.Sprintf("ingest report after the run, with the built-in costs, failed: %s", a.Err)}
	}
	var out []string
	shown := map[string]report.PoolJSON{}
	for _, p := range a.Pools {
		shown[p.Name] = p
	}
	for _, p := range h.Costs.Pools {
		got, ok := shown[p.Name]
		switch {
		case !ok:
			out = append(out, fmt.Sprintf("ingest report after the run, with the built-in costs, showed no pool %s, which the run's costs have", p.Name))
		case got.Limit != p.Limit || got.Reserve != p.Reserve:
			out = append(out, fmt.Sprintf("ingest report after the run, with the built-in costs, showed pool %s at limit %d reserve %d; the run's costs, which it recorded, have %d and %d",
				p.Name, got.Limit, got.Reserve, p.Limit, p.Reserve))
		}
	}
	if len(a.Pools) != len(h.Costs.Pools) {
		out = append(out, fmt.Sprintf("ingest report after the run, with the built-in costs, showed %d pools; the run's costs have %d", len(a.Pools), len(h.Costs.Pools)))
	}
	if run := costs.Hash(h.Costs); !builtIn(h.Costs) && !strings.Contains(a.Note, run) {
		out = append(out, fmt.Sprintf("ingest report after the run, with the built-in costs, did not say they are not the run's (%s): costs_note %q", run, a.Note))
	}
	return out
}

// builtIn says whether c are the costs the binary carries.
func builtIn(c *ingest.Costs) bool { return costs.Hash(c) == costs.Hash(costs.Default()) }

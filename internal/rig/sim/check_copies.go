package sim

import (
	"fmt"
	"slices"
	"time"
)

// checkCopiesRefused: a `db copy` of the daemon's database while the
// daemon ran saw a worker writing it, as docs/operations/growing.md
// promises (`ingest run` holds a lease on its database while it runs, and
// a copy refuses a source so held): a copy that sees none carries a
// source whose calls after it stay behind, to be spent again on the copy.
// A look while the upstream failed or the disk was full is let be (the
// start may still wait on them), and so is one beside a `run --once` of
// the second process: the simulation's processes share one pid, so one
// lease's name.
func checkCopiesRefused(h *History) []string {
	var out []string
	for _, c := range h.Copies {
		if !c.Running || h.failingIn(Interval{c.Started, c.At}) || h.onceRanIn(Interval{c.Started, c.At}) {
			continue
		}
		at := fmt.Sprintf("db copy at %s, %s after the daemon's start", c.At.UTC().Format(time.RFC3339), c.At.Sub(c.Started))
		switch {
		case c.Err != nil:
			out = append(out, fmt.Sprintf("%s: %v", at, c.Err))
		case c.Workers == 0:
			out = append(out, at+", saw no worker writing the database: a copy then would not be refused, and the calls after it would be spent again on the copy")
		}
	}
	return out
}

// onceRanIn: one of the second process's runs was under way at some moment
// of in.
func (h *History) onceRanIn(in Interval) bool {
	return slices.ContainsFunc(h.Joins, func(j Join) bool {
		return slices.ContainsFunc(j.Runs, func(r JoinRun) bool { return !r.From.After(in.To) && !in.From.After(r.To) })
	})
}

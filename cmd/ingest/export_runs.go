package main

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/clock"
	"github.com/ingestworks/ingest/store"
)

// A run belongs to the window of its start, and a window is read only
// once every run that started in it has ended: windows that meet end to
// end then hold every row of every run exactly once, whenever each is
// exported (docs/contract.md, Exports).

// settlePoll spaces the looks at the runs in flight while an export
// waits for them: a chart's page takes about as long.
const settlePoll = 500 * time.Millisecond

// settle waits, up to --wait, until no run that started in the window is
// still in flight, and returns the window's runs as they then are. Past
// --wait it fails naming them: leaving one out would lose its rows, since
// the next window begins after its start.
func settle(ctx context.Context, s *settings, db *store.DB, job exportJob) ([]store.ExportRun, error) {
	began, said := s.now(), false
	for {
		runs, err := db.ExportRuns(ctx, job.filter)
		if err != nil {
			return nil, err
		}
		flying := inFlight(runs)
		if len(flying) == 0 {
			return runs, nil
		}
		waited := clock.Since(s.clock, began)
		if waited >= job.wait {
			return nil, fmt.Errorf("export: %s still in flight after --wait %s: its rows are not all stored yet; "+
				"export again once it has ended, give a longer --wait, or an --until before its start",
				leftList(flying), job.wait)
		}
		if !said {
			s.logger.Info("export: waiting for the window's runs still in flight", "runs", leftList(flying), "wait", job.wait)
			said = true
		}
		if err := clock.Sleep(ctx, min(settlePoll, job.wait-waited)); err != nil {
			return nil, err
		}
	}
}

// recheck fails the export when a run that started in the window
// appeared after settle looked (a run whose start was stamped before the
// window's end and stored after), in flight or with rows: the rows
// written may lack it, and the next window will not hold it.
func recheck(ctx context.Context, db *store.DB, job exportJob) error {
	now, err := db.ExportRuns(ctx, job.filter)
	if err != nil {
		return err
	}
	var late []leftRun
	for _, r := range now {
		if (r.Videos > 0 || r.Status == ingest.StatusRunning) && !slices.ContainsFunc(job.runs, func(o store.ExportRun) bool { return o.ID == r.ID }) {
			late = append(late, leftRun{r, "stored while the export read the window"})
		}
	}
	if len(late) > 0 {
		return fmt.Errorf("export: %s: export again", leftList(late))
	}
	return nil
}

// leftRun is a run an export did not take, and why.
type leftRun struct {
	store.ExportRun
	why string
}

func inFlight(runs []store.ExportRun) []leftRun {
	var out []leftRun
	for _, r := range runs {
		if r.Status == ingest.StatusRunning {
			out = append(out, leftRun{r, "in flight"})
		}
	}
	return out
}

// takenRuns counts the window's runs whose rows the export wrote, and
// lists those --complete-only left out.
func takenRuns(runs []store.ExportRun, completeOnly bool) (taken int, left []leftRun) {
	for _, r := range runs {
		switch {
		case r.Videos == 0:
		case completeOnly && r.Status != ingest.StatusCompleted:
			left = append(left, leftRun{r, "not whole (" + string(r.Status) + "), --complete-only"})
		default:
			taken++
		}
	}
	return taken, left
}

// laterRuns are the runs of the filter's charts that started after the
// window's end, up to now: the next window's, said so that a window
// ending at the current minute does not leave its newest run out quietly.
func laterRuns(ctx context.Context, s *settings, db *store.DB, f store.ExportFilter) ([]leftRun, error) {
	f.Since, f.Until = f.Until, s.now().Add(time.Millisecond)
	if !f.Until.After(f.Since) {
		return nil, nil
	}
	runs, err := db.ExportRuns(ctx, f)
	var out []leftRun
	for _, r := range runs {
		if r.Videos > 0 || r.Status == ingest.StatusRunning {
			out = append(out, leftRun{r, "started after the window's end, the next window's"})
		}
	}
	return out, err
}

// leftListMax bounds the runs a message names one by one.
const leftListMax = 5

// leftList names runs as a message says them: "run 12 (US, started
// 2026-11-28T22:18:07.610Z): in flight", a few, then how many more.
func leftList(runs []leftRun) string {
	var parts []string
	for i, r := range runs {
		if i == leftListMax {
			parts = append(parts, fmt.Sprintf("and %d more", len(runs)-i))
			break
		}
		parts = append(parts, fmt.Sprintf("run %d (%s, started %s): %s", r.ID, ingest.ChartName(r.Region, r.Category),
			r.Started.UTC().Format("2006-01-02T15:04:05.000Z07:00"), r.why))
	}
	return strings.Join(parts, "; ")
}

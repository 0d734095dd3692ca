package sim

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"sync/atomic"
	"time"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/clock"
	"github.com/ingestworks/ingest/custody"
	"github.com/ingestworks/ingest/dbcopy"
	"github.com/ingestworks/ingest/wiring"
)

// A move to a copy and back (docs/operations/growing.md): the daemon is
// stopped, its database copied as `ingest db copy` copies a SQLite file
// (the copy notes where its source is), the daemon runs on the copy for
// a while, then is stopped and started on its own database again. The
// copy's worker counted the source's calls; back on the source, the
// worker counts the copy's, so that nothing is spent twice: what the
// upstream charged is in every check of the pools.

// moveDown is how long the daemon is down for each side of the move.
const moveDown = time.Minute

// copyDSN is the copy the daemon moves to, beside its database.
func copyDSN(dir string) string { return filepath.Join(dir, "copy.db") }

// move, CopyAt after Start, stops the daemon p holds, copies its database
// and starts it on the copy (restart), then CopyFor later stops it there
// and starts it on dsn again.
func (h *History) move(p *atomic.Pointer[process], dsn string, restart func(dsn string)) error {
	time.Sleep(time.Until(h.Start.Add(h.CopyAt)))
	to, err := h.moveToCopy(p.Load(), dsn)
	if err != nil {
		return err
	}
	restart(to)
	time.Sleep(h.CopyFor)
	if err := h.moveBack(p.Load()); err != nil {
		return err
	}
	restart(dsn)
	return nil
}

// moveToCopy stops p, copies dsn into the copy and returns the copy's
// path: the caller starts the daemon there.
func (h *History) moveToCopy(p *process, dsn string) (string, error) {
	at := time.Now()
	if err := p.stop(); err != nil {
		return "", fmt.Errorf("the daemon at %s: %w", at.UTC().Format(time.RFC3339), err)
	}
	h.Down = append(h.Down, Interval{at, at.Add(moveDown)})
	to := copyDSN(h.Dir)
	if err := copyDB(dsn, to, h.Costs); err != nil {
		return "", fmt.Errorf("db copy at %s: %w", at.UTC().Format(time.RFC3339), err)
	}
	time.Sleep(moveDown)
	h.Moved = append(h.Moved, Interval{From: time.Now()})
	return to, nil
}

// moveBack stops p, on the copy, for the caller to start the daemon on
// its own database again.
func (h *History) moveBack(p *process) error {
	at := time.Now()
	if err := p.stop(); err != nil {
		return fmt.Errorf("the daemon on the copy at %s: %w", at.UTC().Format(time.RFC3339), err)
	}
	h.Moved[len(h.Moved)-1].To = at
	h.Down = append(h.Down, Interval{at, at.Add(moveDown)})
	time.Sleep(moveDown)
	return nil
}

// copyDB is `ingest db copy --db dsn --to to` of a SQLite file no worker
// writes: refused while one does, a snapshot of dsn pruned under the
// standing copied whole into to, and the source noted on the copy.
func copyDB(dsn, to string, costs *ingest.Costs) error {
	ctx := context.Background()
	h := &wiring.Host{DSN: dsn, Costs: costs, Clock: clock.System}
	live, err := h.LiveSource(ctx)
	if err != nil {
		return err
	}
	if live != nil {
		return live
	}
	terms := wiring.Terms{Standing: ingest.StandardStanding(), Span: costs.Span(), Clock: clock.System}
	src, _, err := h.CopySource(ctx, to, terms, io.Discard)
	if err != nil {
		return err
	}
	defer h.RemoveSnapshot(to)
	defer src.Close()
	dst, err := h.CopyTarget(ctx, to)
	if err != nil {
		return err
	}
	defer dst.Close()
	if err := dbcopy.Bulk(ctx, src.DB, dst.DB, func(int64, int64) {}); err != nil {
		return err
	}
	return custody.NoteCopySource(ctx, src.Ledger, dst.Ledger, dsn, time.Now())
}

// readMoved adds to the history what the daemon's lives on the copy left
// there: their chart runs and passes. The rest of the copy is the
// source's before the move, which the source holds too; the calls the
// copy's ledger holds are the source's to count once it is back, and are
// read from the source's ledger alone.
func (h *History) readMoved() error {
	if len(h.Moved) == 0 {
		return nil
	}
	ctx := context.Background()
	db, err := wiring.OpenExisting(ctx, copyDSN(h.Dir))
	if err != nil {
		return err
	}
	defer db.Close()
	runs, err := readRuns(ctx, db.DB)
	if err != nil {
		return err
	}
	passes, err := readPasses(ctx, db.DB)
	if err != nil {
		return err
	}
	on := func(t time.Time) bool {
		return slices.ContainsFunc(h.Moved, func(m Interval) bool { return m.Contains(t) })
	}
	for _, r := range runs {
		if on(r.Started) {
			h.Runs = append(h.Runs, r)
		}
	}
	for _, p := range passes {
		if on(p.Started) {
			h.Passes = append(h.Passes, p)
		}
	}
	slices.SortStableFunc(h.Runs, func(a, b Run) int { return a.Started.Compare(b.Started) })
	slices.SortStableFunc(h.Passes, func(a, b Pass) int { return a.Started.Compare(b.Started) })
	return nil
}

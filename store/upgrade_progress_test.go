package store

import (
	"context"
	"database/sql"
	"errors"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// recorder hands the records logged to it to a channel, as many as it holds.
type recorder chan slog.Record

func (r recorder) Enabled(context.Context, slog.Level) bool { return true }
func (r recorder) WithAttrs([]slog.Attr) slog.Handler       { return r }
func (r recorder) WithGroup(string) slog.Handler            { return r }
func (r recorder) Handle(_ context.Context, rec slog.Record) error {
	select {
	case r <- rec:
	default:
	}
	return nil
}

// A step of an upgrade that runs longer than a beat says, at each beat,
// which step is at work and for how long, through the process's logger;
// once it is done it says nothing more. Not parallel: it sets the
// process's logger and the beat.
func TestALongUpgradeSaysItIsAtWork(t *testing.T) {
	saw := make(recorder, 64)
	was, beat := slog.Default(), upgradeBeat
	slog.SetDefault(slog.New(saw))
	upgradeBeat = 5 * time.Millisecond
	t.Cleanup(func() { slog.SetDefault(was); upgradeBeat = beat })

	w, err := sql.Open(driverName, DSN(filepath.Join(t.TempDir(), "ingest.db"), false))
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	tx, err := w.Begin()
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()

	var said []slog.Record
	slow := migration{version: 1, name: "sqlite/0001_slow.sql", sql: `CREATE TABLE slow (x)`,
		// The step is at work until the first beat has been said.
		hook: func(ctx context.Context, _ *sql.Tx, apply func() error) error {
			select {
			case rec := <-saw:
				said = append(said, rec)
			case <-time.After(30 * time.Second):
				return errors.New("nothing said after 30 s of a step")
			}
			return apply()
		}}
	if err := slow.apply(context.Background(), tx, false); err != nil {
		t.Fatal(err)
	}
	// The beats said after the first and before the step returned: the
	// step's watcher is gone once apply returns, so none can come later.
	for len(saw) > 0 {
		said = append(said, <-saw)
	}
	for _, rec := range said {
		attrs := map[string]slog.Value{}
		rec.Attrs(func(a slog.Attr) bool { attrs[a.Key] = a.Value; return true })
		if !strings.Contains(rec.Message, "upgrading the database") || attrs["step"].String() != slow.name {
			t.Errorf("said %q %v, want the upgrade at work naming step %s", rec.Message, attrs, slow.name)
		}
		if _, ok := attrs["elapsed"]; !ok {
			t.Errorf("said %q %v, want how long the step has run (elapsed)", rec.Message, attrs)
		}
	}
	if err := tx.QueryRow(`SELECT count(*) FROM slow`).Scan(new(int)); err != nil {
		t.Errorf("the step's SQL did not run: %v", err)
	}
}

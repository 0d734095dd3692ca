package main

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/internal/rig/storetest"
)

// TestACommandSaysTheFullDiskAnyPartMet: a command whose ledger or limiter
// met SQLite's "database or disk is full" (words that name no file) ends
// with the documented line: the database the settings name, the room
// there, the fix; exit 1.
func TestACommandSaysTheFullDiskAnyPartMet(t *testing.T) {
	db := storetest.Open(t)
	driver := storetest.DiskFull(t, db)
	s := &settings{db: db.Path()}
	cmd := &cobra.Command{Use: "quota", RunE: func(*cobra.Command, []string) error {
		return fmt.Errorf("quota restore: ledger: record: %w", driver)
	}}
	root := &cobra.Command{Use: "ingest"}
	root.AddCommand(cmd)
	runtimeErrors(root, s)
	err := cmd.RunE(cmd, nil)
	var ee *exitError
	if !errors.As(err, &ee) || ee.code != exitRuntime {
		t.Fatalf("%v: want a runtime error, exit %d", err, exitRuntime)
	}
	if !errors.Is(err, ingest.ErrDiskFull) {
		t.Errorf("%v: not said as the full disk", err)
	}
	if want := "quota restore: ledger: record: " + db.Path() + ": the disk is full: SQLite could not write ("; !strings.HasPrefix(err.Error(), want) ||
		!strings.Contains(err.Error(), "free space there") {
		t.Errorf("got %q, want it to start %q and say the fix", err, want)
	}
}

package store

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ingestworks/ingest/internal/rig/pgtest"
)

// atVersion is a database at path whose schema says version v.
func atVersion(t *testing.T, path string, v int) {
	t.Helper()
	db, err := Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Writer().Exec(fmt.Sprintf("PRAGMA user_version = %d", v)); err != nil {
		t.Fatal(err)
	}
}

func TestInspectSQLite(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	older, newer, current := filepath.Join(dir, "older.db"), filepath.Join(dir, "newer.db"), filepath.Join(dir, "current.db")
	atVersion(t, older, SchemaVersion-1)
	atVersion(t, newer, SchemaVersion+1)
	atVersion(t, current, SchemaVersion)
	for _, tc := range []struct {
		name, path, state, want string // want: in the detail, or in the error when state is ""
		fails                   bool
	}{
		{"missing", filepath.Join(dir, "new.db"), Missing, "does not exist yet (check creates nothing)", false},
		{"missing in no directory", filepath.Join(dir, "nodir", "new.db"), Missing, "mkdir -p " + filepath.Join(dir, "nodir"), true},
		{"older", older, Older, fmt.Sprintf("schema version %d; the next run upgrades it to %d", SchemaVersion-1, SchemaVersion), false},
		{"newer", newer, "", "newer than this binary's", true},
		{"current", current, Current, fmt.Sprintf("schema version %d, writable", SchemaVersion), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			state, detail, err := Inspect(context.Background(), tc.path, time.Now())
			text := detail
			if err != nil {
				text = err.Error()
			}
			if state != tc.state || (err != nil) != tc.fails || !strings.Contains(text, tc.want) {
				t.Errorf("Inspect(%s) = %q, %q, %v; want %q, %q, fails %v", tc.name, state, detail, err, tc.state, tc.want, tc.fails)
			}
		})
	}
	if _, err := os.Stat(filepath.Join(dir, "new.db")); !os.IsNotExist(err) {
		t.Errorf("Inspect created the missing database (stat: %v)", err)
	}
}

func TestInspectPostgres(t *testing.T) {
	u := pgtest.URL(t)
	ctx := context.Background()
	if state, detail, err := Inspect(ctx, u, time.Now()); state != Missing || err != nil || !strings.Contains(detail, "holds no ingest schema yet") {
		t.Fatalf("before Open: %q, %q, %v; want missing", state, detail, err)
	}
	db, err := Open(ctx, u)
	if err != nil {
		t.Fatal(err)
	}
	db.Close()
	state, detail, err := Inspect(ctx, u, time.Now())
	if state != Current || err != nil || !strings.Contains(detail, "PostgreSQL") {
		t.Fatalf("after Open: %q, %q, %v; want current, the server's version", state, detail, err)
	}
}

//go:build unix

package store_test

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/store"
)

// A second daemon on a SQLite file is a configuration error (exit 2)
// naming the first; once the first releases the file, it is claimed.
func TestASecondDaemonIsAConfigError(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ingest.db")
	if err := os.WriteFile(path, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	release, err := store.ClaimDaemon(path)
	if err != nil {
		t.Fatal(err)
	}
	_, err = store.ClaimDaemon(path)
	var ce *ingest.ConfigError
	var running *store.DaemonRunningError
	if !errors.As(err, &ce) || !errors.As(err, &running) {
		t.Fatalf("a second daemon on %s: %v, want a configuration error naming the first", path, err)
	}
	if running.Path != path {
		t.Errorf("the refusal names %q, want %q", running.Path, path)
	}
	release()
	again, err := store.ClaimDaemon(path)
	if err != nil {
		t.Fatalf("claim after the first released: %v", err)
	}
	again()
}

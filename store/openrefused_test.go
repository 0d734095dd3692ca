package store_test

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/store"
)

// A database that did not open for its path or its schema's version is a
// configuration error naming the setting and the fix, exit 2; any other
// error is left as the store said it.
func TestOpenRefusedNamesTheSetting(t *testing.T) {
	_, err := store.Open(context.Background(), filepath.Join(t.TempDir(), "missing", "ingest.db"))
	if !errors.Is(err, store.ErrUnusablePath) {
		t.Fatalf("open in a missing directory: %v, want an unusable path", err)
	}
	version := &store.VersionError{Path: "old.db", Have: 99, Want: 1}
	other := errors.New("open x.db: disk I/O error")
	for _, c := range []struct {
		name   string
		err    error
		config bool
	}{{"path", err, true}, {"version", version, true}, {"other", other, false}} {
		got := store.OpenRefused(c.err)
		var ce *ingest.ConfigError
		if errors.As(got, &ce) != c.config {
			t.Errorf("%s: %v is a configuration error: %v, want %v", c.name, got, !c.config, c.config)
		}
		if c.config && (!strings.HasPrefix(got.Error(), "--db (INGEST_DB) ") || !strings.HasSuffix(got.Error(), c.err.Error())) {
			t.Errorf("%s: %q, want --db (INGEST_DB) then %q", c.name, got, c.err)
		}
		if !c.config && got != c.err {
			t.Errorf("%s: %v, want the store's own error", c.name, got)
		}
	}
}

// A database not there yet matches store.ErrNoDatabase and says how to
// make one.
func TestNoneYetSaysTheFix(t *testing.T) {
	err := error(store.NoneYetError{DB: "/var/lib/ingest.db"})
	if !errors.Is(err, store.ErrNoDatabase) {
		t.Errorf("%v does not match ErrNoDatabase", err)
	}
	for _, want := range []string{"/var/lib/ingest.db", "ingest run --once", "--db / INGEST_DB"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%q does not say %q", err, want)
		}
	}
}

package store

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// What Inspect finds of a database.
const (
	Missing = "missing" // none yet: the first run creates it
	Older   = "older"   // an older schema: the next run upgrades it
	Current = "current" // this binary's schema
)

// Inspect looks at the database dsn names without creating or writing
// anything in it (`ingest check`): its state (Missing, Older, Current) and
// what was found, as a line. An error is a database that cannot be used as
// it is, saying why.
func Inspect(ctx context.Context, dsn string) (state, detail string, err error) {
	if IsURL(dsn) {
		return inspectPostgres(ctx, dsn)
	}
	if _, err := os.Stat(dsn); errors.Is(err, os.ErrNotExist) {
		if err := dirWritable(filepath.Dir(dsn)); err != nil {
			return Missing, "", fmt.Errorf("%s does not exist and cannot be created: %w", dsn, err)
		}
		return Missing, fmt.Sprintf("%s does not exist yet (check creates nothing); its directory is writable, the first run creates it", dsn), nil
	}
	v, err := Version(ctx, dsn)
	switch {
	case err != nil:
		return "", "", err
	case v > SchemaVersion:
		return "", "", fmt.Errorf("%s has schema version %d, newer than this binary's %d: upgrade ingest", dsn, v, SchemaVersion)
	case v < SchemaVersion:
		return Older, fmt.Sprintf("%s: schema version %d; the next run upgrades it to %d", dsn, v, SchemaVersion), nil
	}
	if err := dirWritable(filepath.Dir(dsn)); err != nil {
		return Current, "", fmt.Errorf("%s: its directory is not writable (SQLite's WAL needs it): %w", dsn, err)
	}
	return Current, fmt.Sprintf("%s: schema version %d, writable", dsn, v), nil
}

// inspectPostgres is Inspect on PostgreSQL: the server answers, its
// version, and the schema step, read without writing anything.
func inspectPostgres(ctx context.Context, dsn string) (state, detail string, err error) {
	name := Redact(dsn)
	db, err := OpenExisting(ctx, dsn)
	var ve *VersionError
	switch {
	case errors.Is(err, ErrNoDatabase):
		return Missing, fmt.Sprintf("%s answers and holds no ingest schema yet (check creates nothing): the first run creates it", name), nil
	case errors.As(err, &ve) && ve.Have < ve.Want:
		return Older, fmt.Sprintf("%s: schema step %d; the next run upgrades it to %d", name, ve.Have, ve.Want), nil
	case err != nil:
		return "", "", err
	}
	defer db.Close()
	server, err := db.Server(ctx)
	if err != nil {
		return "", "", fmt.Errorf("%s: %w", name, err)
	}
	return Current, fmt.Sprintf("%s: %s", name, server), nil
}

// dirWritable creates and removes a file in dir.
func dirWritable(dir string) error {
	f, err := os.CreateTemp(dir, ".ingest-check-*")
	if err != nil {
		return err
	}
	f.Close()
	return os.Remove(f.Name())
}

package store

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"
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
// it is, saying why. now is the house clock's.
func Inspect(ctx context.Context, dsn string, now time.Time) (state, detail string, err error) {
	if IsURL(dsn) {
		return inspectPostgres(ctx, dsn)
	}
	if _, err := os.Stat(dsn); errors.Is(err, os.ErrNotExist) {
		if err := CheckPath(dsn, true); err != nil {
			return Missing, "", err
		}
		return Missing, fmt.Sprintf("%s does not exist yet (check creates nothing); its directory is writable, the first run creates it", dsn), nil
	}
	v, err := Version(ctx, dsn)
	switch {
	case err != nil:
		return "", "", err
	case v > SchemaVersion:
		return "", "", fmt.Errorf("%s has schema version %d, newer than this binary's %d: upgrade ingest", dsn, v, SchemaVersion)
	}
	// Writable as a run needs it: the file, and its directory for the
	// WAL's files, by this user.
	if err := CheckPath(dsn, true); err != nil {
		return "", "", err
	}
	health, err := Health(ctx, dsn, now)
	if err != nil {
		return "", "", err
	}
	if v < SchemaVersion {
		return Older, fmt.Sprintf("%s: schema version %d; the next run upgrades it to %d; %s", dsn, v, SchemaVersion, health), nil
	}
	return Current, fmt.Sprintf("%s: schema version %d, writable; %s", dsn, v, health), nil
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
	server, err := db.d.server(ctx, db)
	if err != nil {
		return "", "", fmt.Errorf("%s: %w", name, err)
	}
	return Current, fmt.Sprintf("%s: %s", name, server), nil
}

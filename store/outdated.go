package store

// A host whose database another host migrated past this binary's schema
// (a rolling upgrade on a shared PostgreSQL) stops: its store refuses
// every write (VersionError), and the first run that meets the refusal
// ends the daemon, or `run --once`, with exit 2 naming the upgrade, rather
// than failing pass after pass.

import (
	"context"
	"errors"

	"github.com/ingestworks/ingest"
)

// StopWhenOutdated stops the runs (stop) with err as the cause when err,
// a run's end, is the refusal of a newer schema.
func StopWhenOutdated(err error, stop context.CancelCauseFunc) {
	var ve *VersionError
	if errors.As(err, &ve) {
		stop(ve)
	}
}

// Outdated is the configuration error of runs stopped for a newer schema
// (StopWhenOutdated on ctx), or err as it is.
func Outdated(ctx context.Context, err error) error {
	var ve *VersionError
	if errors.As(context.Cause(ctx), &ve) {
		return ingest.ConfigErrorf("--db (INGEST_DB) %v: another host migrated the database while this one ran; nothing was written after it", ve)
	}
	return err
}

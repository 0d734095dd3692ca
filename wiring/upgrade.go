package wiring

import (
	"context"
	"errors"
	"time"

	"github.com/ingestworks/ingest/jobs"
	"github.com/ingestworks/ingest/store"
)

// A host whose database another host migrated past this binary's schema
// (a rolling upgrade on a shared PostgreSQL) stops: its store refuses
// every write (store.VersionError), and the first run that meets the
// refusal ends the daemon, or `run --once`, with exit 2 naming the
// upgrade, rather than failing pass after pass.

// stopWhenOutdated wraps observe so that a run refused for a newer schema
// stops the runs, with the refusal as the cause.
func stopWhenOutdated(observe func(jobs.Entry, jobs.Ended, time.Duration, time.Time), stop context.CancelCauseFunc) func(jobs.Entry, jobs.Ended, time.Duration, time.Time) {
	return func(e jobs.Entry, end jobs.Ended, took time.Duration, slot time.Time) {
		if observe != nil {
			observe(e, end, took, slot)
		}
		var ve *store.VersionError
		if errors.As(end.Err, &ve) {
			stop(ve)
		}
	}
}

// outdated is the configuration error of runs stopped for a newer
// schema, or err as it is.
func outdated(ctx context.Context, err error) error {
	var ve *store.VersionError
	if errors.As(context.Cause(ctx), &ve) {
		return configErrorf("--db (INGEST_DB) %v: another host migrated the database while this one ran; nothing was written after it", ve)
	}
	return err
}

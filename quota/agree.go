package quota

// The checks before anything is spent that the limiter answers: whether
// it holds the costs file's pools, and whether anybody created the key.

import (
	"context"
	"errors"
	"log/slog"

	"github.com/ingestworks/ingest"
)

// Agree checks, before anything is spent, that the limiter holds the same
// pools as this costs file: a disagreement is a configuration error.
// When the limiter cannot be asked, each call meets the same check (or the
// fail policy) later.
func Agree(ctx context.Context, l interface{ CheckConfig(context.Context) error }, log *slog.Logger) error {
	err := l.CheckConfig(ctx)
	var cerr *ConfigError
	switch {
	case errors.As(err, &cerr):
		return ingest.ConfigErrorf("--costs: %w", err)
	case err != nil:
		log.Warn("could not check the limiter's configuration before starting", ingest.LogErr, err)
	}
	return nil
}

// BeforeCreating is Agree and Created on a host that has no database yet,
// before it creates one, so that a run refused for its costs file or its
// quota key leaves no new database behind. A limiter that cannot be asked
// is said nothing of here: the same checks are made once the database is
// open (Agree warns then).
func BeforeCreating(ctx context.Context, l interface{ CheckConfig(context.Context) error }) error {
	var cerr *ConfigError
	if err := l.CheckConfig(ctx); errors.As(err, &cerr) {
		return ingest.ConfigErrorf("--costs: %w", err)
	}
	return Created(ctx, l)
}

// Created is a configuration error when the limiter l is Redis and holds
// no configuration for a key this ledger never spent on (ErrNotApplied);
// nil for every other limiter.
func Created(ctx context.Context, l any) error {
	r, ok := l.(*Redis)
	if !ok {
		return nil
	}
	if err := r.Created(ctx); errors.Is(err, ErrNotApplied) {
		return ingest.ConfigErrorf("--redis / REDIS_URL: %w", err)
	}
	return nil
}

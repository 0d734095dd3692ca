package store_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/store"
)

// TestARunRefusedForANewerSchemaStopsTheRuns: a run's end that is the
// refusal of a newer schema stops the runs, and what they end with is the
// configuration error naming the upgrade; any other end stops nothing and
// passes through as it is.
func TestARunRefusedForANewerSchemaStopsTheRuns(t *testing.T) {
	t.Parallel()
	ctx, stop := context.WithCancelCause(context.Background())
	defer stop(nil)
	failed := errors.New("fetch US page 1: quota exhausted")
	store.StopWhenOutdated(failed, stop)
	store.StopWhenOutdated(nil, stop)
	if ctx.Err() != nil {
		t.Fatalf("another run's end stopped the runs: %v", context.Cause(ctx))
	}
	if got := store.Outdated(ctx, failed); got != failed {
		t.Errorf("Outdated before a stop = %v, want the error as it is", got)
	}
	refused := fmt.Errorf("store page: %w", &store.VersionError{Path: "db", Have: 9, Want: 8})
	store.StopWhenOutdated(refused, stop)
	if ctx.Err() == nil {
		t.Fatal("a run refused for a newer schema did not stop the runs")
	}
	err := store.Outdated(ctx, context.Canceled)
	var ce *ingest.ConfigError
	if !errors.As(err, &ce) || !strings.Contains(err.Error(), "--db (INGEST_DB)") || !strings.Contains(err.Error(), "upgrade ingest") {
		t.Errorf("Outdated after the stop = %v, want a configuration error naming --db and the upgrade", err)
	}
}

package jobs

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/ingestworks/ingest"
)

// sweep is the shape refreshing and tracking share: a pass over the videos
// due, a batch a call, each call metered and its answer stored as soon as
// it comes (so a stop keeps what was read), a drain honoured between
// calls, and the end classified as a job's is (a refusal or a spent
// upstream quota a clean stop, which blocks the pool), without a run row:
// neither keeps one.
type sweep struct {
	what     string // "refresh", "track": its errors' first word
	quotaKey string
	costs    *ingest.Costs
	limiter  Limiter
	logger   *slog.Logger
	clock    ingest.Clock
	drain    <-chan struct{}
	batch    int
}

// run reads the ids due, then gives each batch of them to do.
func (s sweep) run(ctx context.Context, due func(context.Context) ([]string, error),
	do func(ctx context.Context, m *meter, batch []string) error) (ingest.RunEnd, map[string]int64, error) {
	j := job{quotaKey: s.quotaKey, costs: s.costs, limiter: s.limiter, store: noRun(s.what), logger: s.logger, clock: s.clock}
	m := newMeter(s.limiter, s.quotaKey, "", 0)
	out := Outcome{Units: m.units, Remaining: -1}
	j.classify(ctx, &out, s.batches(ctx, m, &out, due, do))
	out.RunEnd.At = s.clock.Now()
	return out.RunEnd, m.units, out.Err
}

func (s sweep) batches(ctx context.Context, m *meter, out *Outcome, due func(context.Context) ([]string, error),
	do func(ctx context.Context, m *meter, batch []string) error) error {
	ids, err := due(ctx)
	if err != nil {
		return fmt.Errorf("%s: %w", s.what, err)
	}
	for start := 0; start < len(ids); start += s.batch {
		if stopping(s.drain) {
			out.interrupted()
			return nil
		}
		if err := do(ctx, m, ids[start:min(start+s.batch, len(ids))]); err != nil {
			return fmt.Errorf("%s %d of %d videos: %w", s.what, start, len(ids), err)
		}
	}
	return nil
}

// noRun is the run store of a pass without a run row: a job's
// classification never finishes one.
type noRun string

func (n noRun) FinishRun(context.Context, int64, ingest.RunEnd) error {
	return fmt.Errorf("%s has no run", string(n))
}

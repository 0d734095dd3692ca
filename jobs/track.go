package jobs

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/ingestworks/ingest"
)

// Tracking follows the counts of the videos the charts showed lately, after
// they leave the charts too, with videos.batchGetStats: 50 videos a call,
// 1 unit of the stats pool, which the charts never draw from.
const (
	// TrackFor is how long a video is tracked after a chart last showed it.
	TrackFor = 7 * 24 * time.Hour
	// TrackEvery is how often tracking reads the counts.
	TrackEvery = time.Hour
	// TrackBatch is the most ids one videos.batchGetStats call takes.
	TrackBatch = 50
)

// StatsSource reads the counts of up to TrackBatch videos in one call.
type StatsSource interface {
	Stats(ctx context.Context, gate ingest.Gate, ids []string) ([]ingest.VideoStats, error)
}

// TrackStore says which videos to track and keeps their counts.
type TrackStore interface {
	SeenOnCharts(ctx context.Context, since time.Time) ([]string, error)
	SaveStats(ctx context.Context, stats []ingest.VideoStats) error
}

// Track reads the counts of every video a chart showed in the last For and
// stores them as a time series. It is not a chart run (no run row, no
// region): its calls are in the ledger under op videos.batchGetStats.
type Track struct {
	QuotaKey string
	Costs    *ingest.Costs
	Limiter  Limiter
	Source   StatsSource
	Store    TrackStore
	Logger   *slog.Logger
	For      time.Duration // TrackFor when zero
	// Drain, once closed, ends tracking between calls.
	Drain <-chan struct{}
	Now   func() time.Time // time.Now when nil
}

// TrackResult is how one tracking pass ended: completed, stopped (the stats
// pool said no, or the upstream's stats quota is spent: a clean stop),
// interrupted or failed.
type TrackResult struct {
	ingest.RunEnd
	Tracked int // videos whose counts were stored
	Calls   int
	Units   map[string]int64
	Err     error
}

func (t *Track) now() time.Time {
	if t.Now != nil {
		return t.Now()
	}
	return time.Now()
}

// Run reads and stores the counts, a batch at a time, each batch stored as
// soon as it is read, so a stop keeps what was read.
func (t *Track) Run(ctx context.Context) TrackResult {
	j := job{region: "", quotaKey: t.QuotaKey, costs: t.Costs, limiter: t.Limiter, store: trackRuns{t.Store},
		logger: t.Logger, now: t.now}
	m := newMeter(t.Limiter, t.QuotaKey, "", 0)
	res := TrackResult{Units: m.units}
	out := Outcome{Units: m.units, Remaining: -1}
	err := t.batches(ctx, m, &res, &out)
	j.classify(ctx, &out, err)
	res.RunEnd, res.Err = out.RunEnd, out.Err
	res.At = t.now()
	return res
}

// Entry is tracking as an entry of a schedule, named "track".
func (t *Track) Entry() Entry {
	return Entry{Name: "track", Kind: KindTracking, run: func(ctx context.Context) Ended {
		res := t.Run(ctx)
		return Ended{RunEnd: res.RunEnd, Err: res.Err, Units: res.Units,
			Did: []any{"tracked", res.Tracked, ingest.LogCalls, res.Calls, ingest.LogUnits, Sum(res.Units)}}
	}}
}

func (t *Track) batches(ctx context.Context, m *meter, res *TrackResult, out *Outcome) error {
	span := t.For
	if span <= 0 {
		span = TrackFor
	}
	ids, err := t.Store.SeenOnCharts(ctx, t.now().Add(-span))
	if err != nil {
		return fmt.Errorf("track: %w", err)
	}
	for start := 0; start < len(ids); start += TrackBatch {
		if stopping(t.Drain) {
			out.interrupted()
			return nil
		}
		batch := ids[start:min(start+TrackBatch, len(ids))]
		stats, err := t.Source.Stats(ctx, m.gate, batch)
		res.Calls++
		if err != nil {
			return fmt.Errorf("track %d of %d videos: %w", start, len(ids), err)
		}
		if err := t.Store.SaveStats(ctx, stats); err != nil {
			return fmt.Errorf("track: %w", err)
		}
		res.Tracked += len(stats)
	}
	return nil
}

// trackRuns lets tracking share a job's classification (a refusal or a
// spent upstream quota is a clean stop, and blocks the pool) without a run
// row: it only ever records blocks.
type trackRuns struct{ TrackStore }

func (trackRuns) StartRun(context.Context, string, string, ingest.PageKind, time.Time) (int64, error) {
	return 0, fmt.Errorf("tracking has no run")
}

func (trackRuns) FinishRun(context.Context, int64, ingest.RunEnd) error {
	return fmt.Errorf("tracking has no run")
}

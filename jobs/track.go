package jobs

import (
	"context"
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

// Run reads and stores the counts, a batch at a time (sweep).
func (t *Track) Run(ctx context.Context) TrackResult {
	span := t.For
	if span <= 0 {
		span = TrackFor
	}
	var res TrackResult
	due := func(ctx context.Context) ([]string, error) { return t.Store.SeenOnCharts(ctx, t.now().Add(-span)) }
	s := sweep{what: "track", quotaKey: t.QuotaKey, costs: t.Costs, limiter: t.Limiter, logger: t.Logger, now: t.now,
		drain: t.Drain, batch: TrackBatch}
	res.RunEnd, res.Units, res.Err = s.run(ctx, due, func(ctx context.Context, m *meter, batch []string) error {
		stats, err := t.Source.Stats(ctx, m.gate, batch)
		res.Calls++
		if err == nil {
			err = t.Store.SaveStats(ctx, stats)
		}
		if err == nil {
			res.Tracked += len(stats)
		}
		return err
	})
	return res
}

// trackMessage is a tracking pass's log line by how it ended.
var trackMessage = map[ingest.RunStatus]string{
	ingest.StatusCompleted:   "tracking",
	ingest.StatusInterrupted: "tracking",
	ingest.StatusFailed:      "tracking failed",
	ingest.StatusStopped:     "tracking stopped: the stats quota said no",
}

// Entry is tracking as an entry of a schedule, named "track".
func (t *Track) Entry() Entry {
	return Entry{Name: "track", Kind: KindTracking, run: func(ctx context.Context, _ time.Time) Ended {
		res := t.Run(ctx)
		return Ended{RunEnd: res.RunEnd, Err: res.Err, Units: res.Units, Message: trackMessage[res.Status],
			Did: []any{"tracked", res.Tracked, ingest.LogCalls, res.Calls, ingest.LogUnits, Sum(res.Units)}}
	}}
}

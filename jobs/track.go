package jobs

import (
	"context"
	"hash/fnv"
	"log/slog"
	"math"
	"time"

	"github.com/ingestworks/ingest"
)

// Tracking follows the counts of the videos the charts showed lately, after
// they leave the charts too, with videos.batchGetStats: 50 videos a call,
// 1 unit of the stats pool, which the charts never draw from.
const (
	// TrackFor is how long a video is tracked after a chart last showed it.
	TrackFor = 7 * 24 * time.Hour
	// TrackEvery is how often tracking runs: a video charted in a tier-1
	// region is read at each run, one of a tier-N region's every Nth.
	TrackEvery = time.Hour
	// TrackBatch is the most ids one videos.batchGetStats call takes.
	TrackBatch = 50
)

// StatsSource reads the counts of up to TrackBatch videos in one call.
type StatsSource interface {
	Stats(ctx context.Context, gate ingest.Gate, ids []string) ([]ingest.VideoStats, error)
}

// TrackStore says which videos to track, and where they charted, and
// keeps their counts.
type TrackStore interface {
	ChartedSince(ctx context.Context, since time.Time) ([]ingest.Charted, error)
	SaveStats(ctx context.Context, stats []ingest.VideoStats) error
}

// Track reads the counts of the videos a chart showed in the last For and
// stores them as a time series, each video at the cadence of the best tier
// it charted in, inside a budget of stats units a day (Cadence). It is not
// a chart run (no run row, no region): its calls are in the ledger under
// op videos.batchGetStats.
type Track struct {
	QuotaKey string
	Costs    *ingest.Costs
	Limiter  Limiter
	Source   StatsSource
	Store    TrackStore
	Logger   *slog.Logger
	For      time.Duration // TrackFor when zero
	// Cadence says which of the videos charted lately each run reads.
	Cadence Cadence
	// Drain, once closed, ends tracking between calls.
	Drain <-chan struct{}
	Clock ingest.Clock // the house's; required
}

// TrackResult is how one tracking pass ended: completed, stopped (the stats
// pool said no, or the upstream's stats quota is spent: a clean stop),
// interrupted or failed.
type TrackResult struct {
	ingest.RunEnd
	Tracked int // videos whose counts were stored
	Charted int // videos a chart showed in the span, read now or at a later run
	Calls   int
	Units   map[string]int64
	Err     error
}

func (t *Track) now() time.Time { return required(t.Clock, "Track").Now() }

// Run reads and stores the counts, a batch at a time (sweep).
func (t *Track) Run(ctx context.Context) TrackResult {
	span := t.For
	if span <= 0 {
		span = TrackFor
	}
	var res TrackResult
	due := func(ctx context.Context) ([]string, error) {
		now := t.now()
		charted, err := t.Store.ChartedSince(ctx, now.Add(-span))
		res.Charted = len(charted)
		return t.Cadence.Due(charted, now), err
	}
	s := sweep{what: "track", quotaKey: t.QuotaKey, costs: t.Costs, limiter: t.Limiter, logger: t.Logger, clock: required(t.Clock, "Track"),
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
			Did: []any{"tracked", res.Tracked, "charted", res.Charted, ingest.LogCalls, res.Calls, ingest.LogUnits, Sum(res.Units)}}
	}}
}

// Cadence is how often tracking reads a video's counts: at every run
// (Every) for a video charted lately in a tier-1 region, every Nth run
// for one whose best region is tier N, the videos of a tier spread evenly
// over its runs. When the reads a day that makes would take more stats
// units than Budget, every period is stretched by one whole factor, the
// smallest that fits: the tiers keep their order.
type Cadence struct {
	// Tier is a region's tier (Timetable.Region); nil is tier 1 for all.
	Tier func(region string) int
	// Every is how often tracking runs; TrackEvery when zero.
	Every time.Duration
	// Budget is the stats units a day tracking may plan on; zero is no
	// bound but the limiter's.
	Budget int64
}

// Cadence is tracking's over the timetable: each video at its best
// region's tier, a run every every, inside budget stats units a day
// (TrackBudget of costs when zero).
func (t Timetable) Cadence(every time.Duration, budget int64, costs *ingest.Costs) Cadence {
	if budget <= 0 {
		budget = TrackBudget(costs)
	}
	return Cadence{Tier: func(code string) int { return t.Region(code).Tier }, Every: every, Budget: budget}
}

func (c Cadence) every() time.Duration {
	if c.Every <= 0 {
		return TrackEvery
	}
	return c.Every
}

// Periods are each video's period, in runs: its best tier's, stretched
// into the budget.
func (c Cadence) Periods(charted []ingest.Charted) []int64 {
	out := make([]int64, len(charted))
	var reads float64 // a day
	runs := float64(24*time.Hour) / float64(c.every())
	for i, v := range charted {
		out[i] = int64(c.best(v.Regions))
		reads += runs / float64(out[i])
	}
	units := math.Ceil(reads / TrackBatch)
	if c.Budget <= 0 || units <= float64(c.Budget) {
		return out
	}
	stretch := int64(math.Ceil(units / float64(c.Budget)))
	for i := range out {
		out[i] *= stretch
	}
	return out
}

// PerRun is how many of charted a run reads on average: what a plan
// counts tracking's calls by.
func (c Cadence) PerRun(charted []ingest.Charted) int {
	var n float64
	for _, p := range c.Periods(charted) {
		n += 1 / float64(p)
	}
	return int(math.Ceil(n))
}

// best is the lowest tier of the regions, 1 without a Tier.
func (c Cadence) best(regions []string) int {
	if c.Tier == nil || len(regions) == 0 {
		return 1
	}
	best := 0
	for _, r := range regions {
		if t := max(c.Tier(r), 1); best == 0 || t < best {
			best = t
		}
	}
	return best
}

// Due are the ids of charted that the run at now reads: a video of period
// P at one run in P, which run fixed by its id, so the videos of a period
// share its runs evenly and a video is read every P runs exactly.
func (c Cadence) Due(charted []ingest.Charted, now time.Time) []string {
	run := now.UnixNano() / int64(c.every())
	var ids []string
	for i, p := range c.Periods(charted) {
		if p <= 1 || (run+phase(charted[i].ID))%p == 0 {
			ids = append(ids, charted[i].ID)
		}
	}
	return ids
}

// phase places a video among the runs of its period.
func phase(id string) int64 {
	h := fnv.New32a()
	h.Write([]byte(id))
	return int64(h.Sum32())
}

// TrackBudget is the stats units a day tracking plans on by default: what
// the pools videos.batchGetStats draws from hold over a day, the fewest
// calls a day any of them admits. The charts never draw from the shipped
// stats pool, so the plan leaves all of it to tracking. Zero when costs
// does not price the call.
func TrackBudget(costs *ingest.Costs) int64 {
	charges, err := costs.Op(ingest.OpBatchGetStats)
	if err != nil {
		return 0
	}
	var calls int64
	for _, ch := range charges {
		p, ok := costs.Pool(ch.Pool)
		if !ok || ch.Units <= 0 || p.Window <= 0 {
			continue
		}
		n := int64(float64(p.Capacity()) * float64(24*time.Hour) / float64(p.Window) / float64(ch.Units))
		if calls == 0 || n < calls {
			calls = n
		}
	}
	return calls
}

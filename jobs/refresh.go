package jobs

import (
	"context"
	"log/slog"
	"time"

	"github.com/ingestworks/ingest"
)

// Refreshing keeps what kept rows show within the upstream's terms
// (docs/explanation/terms.md): a video's text and counts may be stored 30 days, then
// must be deleted or fetched again. Refresh fetches again, by id, the
// videos a chart entry, a backfill result or a tracked count still points
// at, before their text is ingest.RefreshAfter old: videos.list id=, 50
// ids a call, 1 unit of the default pool. A video the upstream no longer
// returns (deleted, made private) is deleted with its rows in that pass,
// leaving a tombstone of its id and the day it went. One the pass could
// not reach (the quota said no) goes at 30 days, by the prune.

// RefreshBatch is the most ids one videos.list call takes.
const RefreshBatch = 50

// VideoSource fetches videos by id, up to RefreshBatch a call; ids the
// upstream does not return are left out.
type VideoSource interface {
	Videos(ctx context.Context, gate ingest.Gate, ids []string) ([]ingest.Video, error)
}

// RefreshStore says which videos to fetch again and keeps what came back.
type RefreshStore interface {
	RefreshDue(ctx context.Context, before time.Time) (int64, time.Time, error)
	ToRefresh(ctx context.Context, before time.Time, limit int) ([]string, error)
	Refreshed(ctx context.Context, videos []ingest.Video, at time.Time) error
	Gone(ctx context.Context, ids []string, at time.Time) (int64, error)
}

// Refresh is one refreshing pass. Like tracking, it is not a chart run (no
// run row, no region): its calls are in the ledger under videos.list.
type Refresh struct {
	QuotaKey string
	Costs    *ingest.Costs
	Limiter  Limiter
	Source   VideoSource
	Store    RefreshStore
	Logger   *slog.Logger
	// After is the age at which a video is fetched again
	// (ingest.RefreshAfter when zero).
	After time.Duration
	// Max is the most videos one pass fetches (0: no bound but Every's).
	Max int
	// Every is how often a pass runs. With it, a pass fetches a share of
	// the videos due (share), not all of them: the backlog spread over the
	// passes left before its oldest video is halfway from due to the
	// terms' limit. Zero fetches every one due.
	Every time.Duration
	// Drain, once closed, ends the pass between calls.
	Drain <-chan struct{}
	Clock ingest.Clock // the house's; required
}

// RefreshResult is how one pass ended: completed, stopped (the quota said
// no: a clean stop), interrupted or failed; what it fetched again, and the
// videos it found gone and deleted.
type RefreshResult struct {
	ingest.RunEnd
	Refreshed int
	Gone      int64
	Calls     int
	Units     map[string]int64
	Err       error
}

func (r *Refresh) now() time.Time { return required(r.Clock, "Refresh").Now() }

// Run fetches again every video due, a batch at a time (sweep).
func (r *Refresh) Run(ctx context.Context) RefreshResult {
	after := r.After
	if after <= 0 {
		after = ingest.RefreshAfter
	}
	var res RefreshResult
	due := func(ctx context.Context) ([]string, error) {
		now := r.now()
		limit, err := r.share(ctx, now, after)
		if err != nil || limit == 0 {
			return nil, err
		}
		return r.Store.ToRefresh(ctx, now.Add(-after), limit)
	}
	s := sweep{what: "refresh", quotaKey: r.QuotaKey, costs: r.Costs, limiter: r.Limiter, logger: r.Logger, clock: required(r.Clock, "Refresh"),
		drain: r.Drain, batch: RefreshBatch}
	res.RunEnd, res.Units, res.Err = s.run(ctx, due, func(ctx context.Context, m *meter, batch []string) error {
		return r.batch(ctx, m, batch, &res)
	})
	return res
}

// share is how many videos the pass at now fetches, the oldest first.
// With Every, the videos due (fetched over after ago) are spread evenly,
// in whole calls, over the passes left until the oldest of them is
// halfway between after and ingest.DataFor old: each pass then fetches
// what the charts brought in about one period, whatever the archive
// holds, and every video is fetched again days before the terms' limit,
// a margin for passes the quota refuses. The newly due join the backlog
// behind older ones, whose share was set to be done by then. Past that
// point (the daemon was down, the quota said no) the rest is spread over
// the passes left before ingest.DataFor, less one.
func (r *Refresh) share(ctx context.Context, now time.Time, after time.Duration) (int, error) {
	all := 1 << 30
	if r.Max > 0 {
		all = r.Max
	}
	if r.Every <= 0 {
		return all, nil
	}
	n, oldest, err := r.Store.RefreshDue(ctx, now.Add(-after))
	if err != nil || n == 0 {
		return 0, err
	}
	target := oldest.Add((after + ingest.DataFor) / 2)
	if !now.Before(target) {
		target = oldest.Add(ingest.DataFor - r.Every)
	}
	passes := int64(target.Sub(now) / r.Every)
	if passes < 1 {
		return min(all, int(n)), nil
	}
	per := (n + passes - 1) / passes
	calls := (per + RefreshBatch - 1) / RefreshBatch
	return min(all, int(calls)*RefreshBatch), nil
}

// batch fetches ids in one call, stores what came back and deletes what
// did not.
func (r *Refresh) batch(ctx context.Context, m *meter, ids []string, res *RefreshResult) error {
	videos, err := r.Source.Videos(ctx, m.gate, ids)
	res.Calls++
	if err != nil {
		return err
	}
	at := r.now()
	if err := r.Store.Refreshed(ctx, videos, at); err != nil {
		return err
	}
	res.Refreshed += len(videos)
	back := make(map[string]bool, len(videos))
	for _, v := range videos {
		back[v.ID] = true
	}
	var gone []string
	for _, id := range ids {
		if !back[id] {
			gone = append(gone, id)
		}
	}
	if len(gone) == 0 {
		return nil
	}
	n, err := r.Store.Gone(ctx, gone, at)
	res.Gone += n
	return err
}

// refreshMessage is a refresh's log line by how it ended.
var refreshMessage = map[ingest.RunStatus]string{
	ingest.StatusCompleted:   "refreshed",
	ingest.StatusInterrupted: "refreshed",
	ingest.StatusFailed:      "refresh failed; trying again next period",
	ingest.StatusStopped:     "refresh stopped: the quota said no; what it did not reach goes at 30 days",
}

// Entry is refreshing as an entry of a schedule, named "refresh".
func (r *Refresh) Entry() Entry {
	return Entry{Name: "refresh", Kind: KindRefresh, run: func(ctx context.Context, _ time.Time) Ended {
		res := r.Run(ctx)
		return Ended{RunEnd: res.RunEnd, Err: res.Err, Units: res.Units, Gone: res.Gone, Message: refreshMessage[res.Status],
			Did: []any{"refreshed", res.Refreshed, "gone", res.Gone, ingest.LogCalls, res.Calls, ingest.LogUnits, Sum(res.Units)}}
	}}
}

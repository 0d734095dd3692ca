package jobs_test

import (
	"context"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/jobs"
	"github.com/ingestworks/ingest/store"
)

// stats reads counts through the gate, as the real client does.
type stats struct{}

func (stats) Stats(ctx context.Context, gate ingest.Gate, ids []string) ([]ingest.VideoStats, error) {
	if _, err := gate(ctx, ingest.OpBatchGetStats); err != nil {
		return nil, err
	}
	out := make([]ingest.VideoStats, len(ids))
	for i, id := range ids {
		out[i] = ingest.VideoStats{ID: id, ViewCount: 1, At: time.Now()}
	}
	return out, nil
}

// retention is the store's prune as the prune job asks for it.
type retention struct{ db *store.DB }

func (r retention) Prune(ctx context.Context, before, ledgerBefore time.Time) (jobs.Pruned, error) {
	p, err := r.db.Prune(ctx, store.Retention{Before: before, LedgerBefore: ledgerBefore})
	return jobs.Pruned{Runs: p.Runs, Entries: p.Entries, Stats: p.Stats, Videos: p.Videos, Ledger: p.Ledger, Freed: p.Freed}, err
}

// TestDaemonRunsEveryKindFromOneSchedule: with tracking and pruning on,
// the one schedule runs chart passes, tracking and pruning, each through
// the runner (Observe sees every run, with the slot its schedule gave),
// tracking after the period's charts and pruning at start too; a drain
// stops them all.
func TestDaemonRunsEveryKindFromOneSchedule(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		db, lim := storeAndLimiter(t)
		src := &slowSource{took: map[string]time.Duration{}, at: map[string][]time.Time{}}
		drain := make(chan struct{})
		r := daemon(db, lim, src, drain)
		type run struct {
			name        string
			kind        jobs.Kind
			status      ingest.RunStatus
			start, slot time.Time
		}
		var mu sync.Mutex
		var runs []run
		r.Observe = func(e jobs.Entry, end jobs.Ended, took time.Duration, slot time.Time) {
			mu.Lock()
			defer mu.Unlock()
			runs = append(runs, run{e.Name, e.Kind, end.Status, time.Now().Add(-took), slot})
		}
		every := 8 * time.Minute
		d := &jobs.Daemon{Runner: r, Every: every, TrackEvery: 4 * time.Minute,
			Track: &jobs.Track{QuotaKey: "q", Costs: ingest.DefaultCosts(), Limiter: lim, Source: stats{},
				Store: db, Logger: quiet(), Drain: drain},
			Prune: &jobs.Prune{Keep: 24 * time.Hour, Span: ingest.DefaultCosts().Span(), Store: retention{db}, Drain: drain}}
		entries, err := d.Entries()
		if err != nil {
			t.Fatal(err)
		}
		slots := map[string]jobs.Schedule{}
		for _, e := range entries {
			slots[e.Name] = e.Slots
		}
		started := time.Now()
		done := make(chan error)
		go func() { done <- d.Run(ctx) }()
		time.Sleep(20 * time.Minute)
		close(drain)
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		kinds := map[jobs.Kind]int{}
		for _, o := range runs {
			kinds[o.kind]++
			if o.status != ingest.StatusCompleted {
				t.Errorf("%s at %s: %s, want completed", o.name, o.start.Format(time.TimeOnly), o.status)
			}
			if !o.slot.IsZero() && o.slot != slots[o.name].Prev(o.start) {
				t.Errorf("%s at %s: slot %s, want its schedule's %s", o.name, o.start.Format(time.TimeOnly),
					o.slot.Format(time.TimeOnly), slots[o.name].Prev(o.start).Format(time.TimeOnly))
			}
			if o.kind == jobs.KindTracking && o.slot.IsZero() {
				t.Errorf("tracking at %s ran for no slot: it waits for its slot after the charts", o.start.Format(time.TimeOnly))
			}
		}
		// 20 minutes: 2 or 3 periods of charts, 5 of tracking, and pruning
		// at start and at 2 slots.
		if kinds[jobs.KindChart] < 2*len(ingest.DefaultRegions) || kinds[jobs.KindTracking] < 4 || kinds[jobs.KindPrune] < 3 {
			t.Errorf("runs by kind: %v; want charts, tracking and pruning each on their schedule", kinds)
		}
		var tracked int
		if err := db.Writer().QueryRow(`SELECT count(*) FROM video_stats WHERE at_ms >= ?`, started.UnixMilli()).Scan(&tracked); err != nil {
			t.Fatal(err)
		}
		if tracked == 0 {
			t.Error("tracking ran but stored no counts")
		}
	})
}

package jobs_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/clock"
	"github.com/ingestworks/ingest/costs"
	"github.com/ingestworks/ingest/jobs"
	"github.com/ingestworks/ingest/regions"
	"github.com/ingestworks/ingest/retention"
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
		d := &jobs.Daemon{Roster: jobs.Roster{Runner: r, Every: every, TrackEvery: 4 * time.Minute,
			Track: &jobs.Track{Clock: clock.System, QuotaKey: "q", Costs: costs.Default(), Limiter: lim, Source: stats{},
				Store: db, Logger: quiet(), Drain: drain},
			Prune: &jobs.Prune{Clock: clock.System, Keep: 24 * time.Hour, Span: costs.Default().Span(), Store: retention.Store{DB: db}, Drain: drain}}}
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
		// Drain between slots: a chart's slot falls on every whole minute,
		// and one drained as it starts would end interrupted.
		time.Sleep(20*time.Minute + 10*time.Second)
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
		if kinds[jobs.KindChart] < 2*len(regions.Default) || kinds[jobs.KindTracking] < 4 || kinds[jobs.KindPrune] < 3 {
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

// everyOther is a pacer that allows tracking every other slot and every
// other entry at each slot, and keeps how each run it allowed ended.
type everyOther struct {
	mu    sync.Mutex
	asked map[string]int
	open  map[string]bool // allowed, not yet told how it ended
	ended map[string][]ingest.RunStatus
}

func (*everyOther) WaitsForRoom(string) bool { return false }

func (p *everyOther) Due(_ context.Context, name string, _ time.Time) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.asked[name]++
	if name == "track" && p.asked[name]%2 == 0 {
		return false
	}
	p.open[name] = true
	return true
}

func (*everyOther) Look(context.Context) {}

func (p *everyOther) Ran(name string, _, _ map[string]int64, st ingest.RunStatus) {
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.open, name)
	p.ended[name] = append(p.ended[name], st)
}

// TestPacerGatesEveryEntry: the pacer decides at every slot whether an
// entry runs there, and is told how every run it allowed ended. Allowing
// tracking every other slot halves its runs, each for a slot of its own
// schedule; the charts keep every slot.
func TestPacerGatesEveryEntry(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		db, lim := storeAndLimiter(t)
		src := &slowSource{took: map[string]time.Duration{}, at: map[string][]time.Time{}}
		drain := make(chan struct{})
		r := daemon(db, lim, src, drain)
		var mu sync.Mutex
		runs := map[jobs.Kind][]time.Time{}
		r.Observe = func(e jobs.Entry, _ jobs.Ended, _ time.Duration, slot time.Time) {
			mu.Lock()
			defer mu.Unlock()
			runs[e.Kind] = append(runs[e.Kind], slot)
		}
		trackEvery := 4 * time.Minute
		pc := &everyOther{asked: map[string]int{}, open: map[string]bool{}, ended: map[string][]ingest.RunStatus{}}
		d := &jobs.Daemon{Roster: jobs.Roster{Runner: r, Every: 8 * time.Minute, TrackEvery: trackEvery,
			Track: &jobs.Track{Clock: clock.System, QuotaKey: "q", Costs: costs.Default(), Limiter: lim, Source: stats{},
				Store: db, Logger: quiet(), Drain: drain}},
			Pacer: pc}
		done := make(chan error)
		go func() { done <- d.Run(context.Background()) }()
		time.Sleep(24 * time.Minute)
		close(drain)
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		if n := len(runs[jobs.KindTracking]); n != 3 {
			t.Errorf("tracking ran %d times in 24 minutes of every other 4-minute slot, want 3: %v", n, runs[jobs.KindTracking])
		}
		entries, _ := d.Entries()
		own := entries[len(entries)-1].Slots
		for _, slot := range runs[jobs.KindTracking] {
			if slot.IsZero() || own.Prev(slot) != slot {
				t.Errorf("tracking ran for %s, not a slot of its schedule", slot.Format(time.TimeOnly))
			}
		}
		if n := len(runs[jobs.KindChart]); n < 3*len(regions.Default) {
			t.Errorf("charts ran %d times in 3 periods, want every chart in each", n)
		}
		if len(pc.open) != 0 {
			t.Errorf("the pacer was never told how these runs ended: %v", pc.open)
		}
		if got := pc.ended["track"]; len(got) != 3 || got[0] != ingest.StatusCompleted {
			t.Errorf("tracking's ends as the pacer saw them: %v, want 3 completed", got)
		}
	})
}

// TestPruneEndsOnDrain: pruning, like the other entries, ends between its
// transactions once drain closes, as interrupted, not failed.
func TestPruneEndsOnDrain(t *testing.T) {
	db, _ := storeAndLimiter(t)
	drain := make(chan struct{})
	close(drain)
	p := &jobs.Prune{Clock: clock.System, Keep: time.Hour, Store: retention.Store{DB: db}, Drain: drain}
	if res := p.Run(context.Background()); res.Status != ingest.StatusInterrupted {
		t.Errorf("prune after drain: %s (%v), want interrupted", res.Status, res.Err)
	}
	p.Drain = nil
	if res := p.Run(context.Background()); res.Status != ingest.StatusCompleted {
		t.Errorf("prune: %s (%v), want completed", res.Status, res.Err)
	}
}

// failingSource fails every chart, as an upstream that answers 500 to
// every call does after the client's retries; or with err, when set.
type failingSource struct {
	calls atomic.Int64
	err   error
}

func (s *failingSource) Chart(ctx context.Context, gate ingest.Gate, _, _, _ string) (ingest.Page, error) {
	if _, err := gate(ctx, "videos.list"); err != nil {
		return ingest.Page{}, err
	}
	s.calls.Add(1)
	if s.err != nil {
		return ingest.Page{}, s.err
	}
	return ingest.Page{}, errors.New("HTTP 500 backendError: Backend Error")
}

func (s *failingSource) Categories(context.Context, ingest.Gate, string, string) ([]ingest.Category, error) {
	return nil, nil
}

// TestDaemonBacksOffAFailingUpstream: charts that fail in a row stop the
// daemon's passes for a wait that doubles, said with when they resume.
func TestDaemonBacksOffAFailingUpstream(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		src := &failingSource{}
		logs := daemonFor40Minutes(t, src)
		// Without a backoff, every chart's slot of 40 minutes at an 8-minute
		// period: 5 each, 40 and more calls. With it: the catch-up's first
		// 3, then 3 after each wait (5, 10, 20 minutes).
		if n := src.calls.Load(); n > 15 {
			t.Errorf("%d calls to a failing upstream in 40 minutes: want the daemon to back off", n)
		}
		if !strings.Contains(logs, "backing off an upstream that fails every chart") || !strings.Contains(logs, "until_utc=") {
			t.Errorf("no backoff of the upstream said in the log:\n%s", logs)
		}
	})
}

// TestDaemonBacksOffAFullDiskBlamingTheDatabase: charts that fail in a
// row on a full disk are backed off the same, and the log blames the
// database, not the upstream.
func TestDaemonBacksOffAFullDiskBlamingTheDatabase(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		src := &failingSource{err: fmt.Errorf("store page 1 of run 7: %w", ingest.ErrDiskFull)}
		logs := daemonFor40Minutes(t, src)
		if n := src.calls.Load(); n > 15 {
			t.Errorf("%d charts tried in 40 minutes of a full disk: want the daemon to back off", n)
		}
		if !strings.Contains(logs, "backing off a database that fails every chart") || strings.Contains(logs, "an upstream") {
			t.Errorf("the backoff does not blame the database alone:\n%s", logs)
		}
	})
}

// unavailableSource is a chart source whose limiter cannot decide: every
// page fails before the upstream is asked.
type unavailableSource struct{ asks atomic.Int64 }

func (s *unavailableSource) Chart(context.Context, ingest.Gate, string, string, string) (ingest.Page, error) {
	s.asks.Add(1)
	return ingest.Page{}, fmt.Errorf("fetch videos.list: limiter: %w: unconfirmed: 0 of 1 replicas confirmed the write", ingest.ErrUnavailable)
}

func (s *unavailableSource) Categories(context.Context, ingest.Gate, string, string) ([]ingest.Category, error) {
	return nil, nil
}

// A limiter that cannot decide (a Redis primary without its replica, just
// after a failover) is not an upstream that fails: the passes it fails
// asked the upstream nothing, and the daemon tries each chart again at
// its next slot rather than backing off for minutes.
func TestDaemonDoesNotBackOffAnUnavailableLimiter(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		src := &unavailableSource{}
		logs := daemonFor40Minutes(t, src)
		// Each of the 8 charts at the catch-up and at its 5 slots of 40
		// minutes; a backoff after the first 3 would leave at most 15.
		if n := src.asks.Load(); n < 40 {
			t.Errorf("%d chart passes in 40 minutes of an unavailable limiter, want each chart at each of its slots (40 and more)", n)
		}
		if strings.Contains(logs, "backing off") {
			t.Errorf("the daemon backed off a limiter that could not decide:\n%s", logs)
		}
	})
}

// daemonFor40Minutes runs a daemon of every default chart on src at an
// 8-minute period for 40 minutes of the bubble's clock, and returns its log.
func daemonFor40Minutes(t *testing.T, src jobs.Source) string {
	t.Helper()
	db, lim := storeAndLimiter(t)
	drain := make(chan struct{})
	r := daemon(db, lim, src, drain)
	var logs strings.Builder
	var mu sync.Mutex
	r.Logger = slog.New(slog.NewTextHandler(lockedWriter{&mu, &logs}, nil))
	d := &jobs.Daemon{Roster: jobs.Roster{Runner: r, Every: 8 * time.Minute}}
	done := make(chan error)
	go func() { done <- d.Run(context.Background()) }()
	time.Sleep(40*time.Minute + 10*time.Second)
	close(drain)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	return logs.String()
}

type lockedWriter struct {
	mu *sync.Mutex
	w  io.Writer
}

func (l lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// planned is everyOther with a plan that says when each entry runs next.
type planned struct {
	*everyOther
	next map[string]time.Time
}

func (p planned) Next(_ context.Context, name string) time.Time { return p.next[name] }

// TestTheScheduleSaysThePlansNextRun: the daemon's start says each entry's
// first run as the pacer's plan gives it (what report and /quota give),
// not the entry's next slot, and "none" for an entry the plan dropped.
func TestTheScheduleSaysThePlansNextRun(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		db, lim := storeAndLimiter(t)
		src := &slowSource{took: map[string]time.Duration{}, at: map[string][]time.Time{}}
		drain := make(chan struct{})
		r := daemon(db, lim, src, drain)
		var log bytes.Buffer
		r.Logger = slog.New(slog.NewTextHandler(&log, nil))
		later := time.Now().Add(3 * time.Hour).Truncate(time.Hour).UTC()
		pc := planned{&everyOther{asked: map[string]int{}, open: map[string]bool{}, ended: map[string][]ingest.RunStatus{}},
			map[string]time.Time{"US": later}}
		d := &jobs.Daemon{Roster: jobs.Roster{Runner: r, Every: time.Hour}, Pacer: pc}
		done := make(chan error)
		go func() { done <- d.Run(context.Background()) }()
		time.Sleep(time.Second)
		close(drain)
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		for region, want := range map[string]string{"US": later.Format(time.RFC3339), "GB": "none"} {
			line := "msg=scheduled region=" + region + " kind=chart first_slot=" + want
			if !strings.Contains(log.String(), line) {
				t.Errorf("the daemon's start does not say %q:\n%s", line, log.String())
			}
		}
	})
}

package pace_test

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/clock"
	"github.com/ingestworks/ingest/pace"
	"github.com/ingestworks/ingest/regions"
)

// A plan that drops entries says so in one line, however many it drops,
// and a plan made again that changes nothing says nothing; one that takes
// them back says that, once.
func TestPlanChangeIsOneLine(t *testing.T) {
	t.Parallel()
	pool := ingest.Pool{Name: "default", Limit: 1000, Window: 24 * time.Hour}
	remaining := int64(1000)
	state := func(context.Context) ([]ingest.PoolState, error) {
		return []ingest.PoolState{{Pool: "default", Remaining: remaining}}, nil
	}
	var entries []pace.Entry
	for i := range 40 {
		entries = append(entries, entry(fmt.Sprintf("C%02d", i), 0, time.Hour, 4))
	}
	var logs bytes.Buffer
	now := t0
	p := newPacer(t, pace.Config{Pools: []ingest.Pool{pool}, State: state, Entries: entries, Bound: time.Hour,
		Clock: clock.Func(func() time.Time { return now }), Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	for range 3 {
		if _, err := p.Plan(context.Background()); err != nil {
			t.Fatal(err)
		}
		now = now.Add(time.Minute)
	}
	if n := strings.Count(logs.String(), "pace: the plan drops"); n != 1 || strings.Count(logs.String(), "\n") != 1 {
		t.Fatalf("three plans that drop the same entries logged %d drop lines:\n%s", n, logs.String())
	}
	if !strings.Contains(logs.String(), "more") {
		t.Errorf("the drop line does not say how many more it did not name:\n%s", logs.String())
	}
	logs.Reset()
	pool.Limit, remaining = 1_000_000, 1_000_000
	p = newPacer(t, pace.Config{Pools: []ingest.Pool{pool}, State: state, Entries: entries, Bound: time.Hour,
		Clock: clock.Func(func() time.Time { return now }), Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	if _, err := p.Plan(context.Background()); err != nil {
		t.Fatal(err)
	}
	if logs.Len() != 0 {
		t.Errorf("a plan that drops nothing logged:\n%s", logs.String())
	}
}

// The slot after a catch-up is declined by design (the catch-up was its
// pass): the pacer says so at info, with the reason, the last pass and the
// next run, and counts it
// declined, as it counts every slot it declines; an ask off the slots (a
// catch-up's) is no slot declined.
func TestASlotDeclinedAfterACatchUpSaysWhy(t *testing.T) {
	t.Parallel()
	sl, err := regions.Stagger(time.Hour, 0, 1)
	if err != nil {
		t.Fatal(err)
	}
	e := entry("US", 0, time.Hour, 4)
	e.Tier, e.Slots = 1, sl
	pool := ingest.Pool{Name: "default", Limit: 10000, Window: 24 * time.Hour}
	state := func(context.Context) ([]ingest.PoolState, error) {
		return []ingest.PoolState{{Pool: pool.Name, Limit: pool.Limit, Remaining: pool.Capacity()}}, nil
	}
	var logs bytes.Buffer
	now := sl.Next(t0).Add(-40 * time.Minute) // a restart 20 minutes after the slot it missed
	p := newPacer(t, pace.Config{Pools: []ingest.Pool{pool}, State: state, Entries: []pace.Entry{e}, Refresh: time.Hour,
		Clock: clock.Func(func() time.Time { return now }), Logger: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	ctx := context.Background()
	if !p.Due(ctx, "US", now) {
		t.Fatal("the catch-up at start: not due")
	}
	p.Ran("US", map[string]int64{"default": 4}, nil, ingest.StatusCompleted)
	next := sl.Next(now)
	now = next
	if p.Due(ctx, "US", next) {
		t.Fatal("the slot after the catch-up ran the chart again, 40 minutes after it")
	}
	var line string
	for _, l := range strings.Split(logs.String(), "\n") {
		if strings.Contains(l, "slot declined") {
			line = l
		}
	}
	if !strings.Contains(line, "level=INFO") || !strings.Contains(line, "entry=US") || !strings.Contains(line, `reason="caught up"`) ||
		!strings.Contains(line, "last_pass_ago=40m0s") || !strings.Contains(line, "next=") {
		t.Errorf("the slot after a catch-up: want one line at info saying it was declined, for US, caught up, its last pass and its next; got %q in:\n%s", line, logs.String())
	}
	if got := p.Status().Entries[0].Declined; got[pace.DeclinedCaughtUp] != 1 || len(got) != 1 {
		t.Errorf("US's declined slots %v, want one, caught up", got)
	}
	now = sl.Next(next)
	if !p.Due(ctx, "US", now) {
		t.Errorf("US's slot a cadence after the one its catch-up served: not due")
	}
}

// A plan that stretches a tier it held at its floor says so at info, a
// line a tier, the lowest tier first to give way; and says when it holds
// one at its floor again. Here workers join the pool and leave it, so its
// share shrinks and grows back.
func TestPlanSaysWhichTierGivesWay(t *testing.T) {
	t.Parallel()
	pool := ingest.Pool{Name: "default", Limit: 600, Window: 24 * time.Hour}
	others := 0
	state := func(context.Context) ([]ingest.PoolState, error) {
		return []ingest.PoolState{{Pool: "default", Remaining: 600, Others: others}}, nil
	}
	entries := []pace.Entry{tiered("US", 0, 1, time.Hour, 10), tiered("JP", 0, 3, time.Hour, 10)} // 240 and 80 units a day
	var logs bytes.Buffer
	now := t0
	p := newPacer(t, pace.Config{Pools: []ingest.Pool{pool}, State: state, Entries: entries,
		Clock: clock.Func(func() time.Time { return now }), Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	var said []string
	for _, n := range []int{0, 1, 2, 0} {
		others = n
		if _, err := p.Plan(context.Background()); err != nil {
			t.Fatal(err)
		}
		said = append(said, strings.TrimSpace(logs.String()))
		logs.Reset()
		now = now.Add(time.Minute)
	}
	lines := strings.Join(said, "\n")
	for i, want := range [][]string{
		{},
		{`give way to a short pool" tier=3`},
		{`give way to a short pool" tier=1`},
		{`at its cadence again" tier=1`, `at its cadence again" tier=3`},
	} {
		for _, w := range want {
			if !strings.Contains(said[i], w) {
				t.Errorf("plan %d: want %q in what it said:\n%s", i+1, w, lines)
			}
		}
		if n := strings.Count(said[i], "tier="); n != len(want) {
			t.Errorf("plan %d: %d tier lines, want %d:\n%s", i+1, n, len(want), lines)
		}
	}
}

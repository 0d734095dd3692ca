package pace_test

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/clock"
	"github.com/ingestworks/ingest/pace"
	"github.com/ingestworks/ingest/regions"
)

// TestADeclinedSlotIsSaidOnceWithWhenItRunsNext: the slots an entry is
// declined at for one reason are said at info once, naming the reason
// and the slot it runs at next, then at debug until it runs.
func TestADeclinedSlotIsSaidOnceWithWhenItRunsNext(t *testing.T) {
	t.Parallel()
	pool := ingest.Pool{Name: "default", Limit: 40, Window: 2 * time.Minute}
	remaining := int64(2)
	state := func(context.Context) ([]ingest.PoolState, error) {
		return []ingest.PoolState{{Pool: "default", Used: pool.Limit - remaining, Remaining: remaining}}, nil
	}
	nl := entry("NL", 0, time.Minute, 4)
	slots, err := regions.Charts("NL")[0].Stagger(time.Minute, 0, 1)
	if err != nil {
		t.Fatal(err)
	}
	nl.Slots = slots
	now := t0
	var log bytes.Buffer
	p := newPacer(t, pace.Config{Pools: []ingest.Pool{pool}, State: state, Entries: []pace.Entry{nl},
		Clock:  clock.Func(func() time.Time { return now }),
		Logger: slog.New(slog.NewTextHandler(&log, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	ctx := context.Background()
	for i := range 3 {
		now = t0.Add(time.Duration(i) * time.Minute)
		if p.Due(ctx, "NL", now) {
			t.Fatalf("with %d units left, NL's pass of 4 ran", remaining)
		}
	}
	info := func() []string {
		var out []string
		for _, line := range strings.Split(log.String(), "\n") {
			if strings.Contains(line, "level=INFO") && strings.Contains(line, `msg="pace: slot declined"`) {
				out = append(out, line)
			}
		}
		return out
	}
	said := info()
	if len(said) != 1 {
		t.Fatalf("three slots declined for want of room: %d lines at info, want 1:\n%s", len(said), log.String())
	}
	if !strings.Contains(said[0], `reason="no room"`) || !strings.Contains(said[0], "entry=NL") || !strings.Contains(said[0], "next=") {
		t.Errorf("the line at info %q: want the entry, the reason and when it runs next", said[0])
	}
	if n := strings.Count(log.String(), "level=DEBUG msg=\"pace: slot declined\""); n != 2 {
		t.Errorf("the two declines after the first: %d at debug, want 2", n)
	}
}

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

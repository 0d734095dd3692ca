package quota

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ingestworks/ingest/costs"
	"github.com/ingestworks/ingest/internal/rig/clocktest"
	"github.com/ingestworks/ingest/internal/rig/redistest"
)

// downNotes is a database that takes no note while down.
type downNotes struct {
	memNotes
	down bool
}

func (n *downNotes) Note(ctx context.Context, name, value string) error {
	if n.down {
		return errors.New("dial tcp 127.0.0.1:5432: connect: connection refused")
	}
	return n.memNotes.Note(ctx, name, value)
}

// TestADatabaseDownIsOneFaultNotALineABeat: while the database takes no
// note, the copy of the limiter's ledgers kept at every Beat is said once
// when it starts failing, reminded once a minute, and once when it works
// again, with what the fault cost.
func TestADatabaseDownIsOneFaultNotALineABeat(t *testing.T) {
	t.Parallel()
	c, err := costs.Parse("internal", []byte("pools:\n  default: {limit: 100, window: 1h}\noperations:\n  videos.list: {default: 1}\n"))
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	now := clocktest.NewFake(time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC))
	notes := &downNotes{down: true}
	v := &ledgerView{opts: settings{Options: Options{Logger: slog.New(slog.NewTextHandler(&out, nil))}, Clock: now,
		Ledger: Ledger{Notes: notes}, Costs: c}}
	ctx := context.Background()
	for range 5 * 30 { // five minutes of a Beat every 2 s
		v.keepCopy(ctx, now.Now().UnixMilli(), nil)
		now.Advance(2 * time.Second)
	}
	notes.down = false
	v.keepCopy(ctx, now.Now().UnixMilli(), nil)
	v.keepCopy(ctx, now.Now().UnixMilli(), nil)
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 1+4+1 || !strings.Contains(lines[0], "failing") || !strings.Contains(lines[1], "still failing") ||
		!strings.Contains(lines[len(lines)-1], "working again") || !strings.Contains(lines[len(lines)-1], "failed=150") {
		t.Errorf("five minutes of a database down: want a line when it starts, one reminder a minute and one when it ends, got %d:\n%s", len(lines), out.String())
	}
}

// TestAnOutageWithNoPassDueIsSaid: a Redis that stops answering while no
// call is asked is said by the heartbeat: once when it starts, reminded
// once a minute, and once when it answers again, never a line a Beat.
func TestAnOutageWithNoPassDueIsSaid(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	c, err := NewClient("redis://"+srv.Addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	costs, err := costs.Parse("internal", []byte("pools:\n  default: {limit: 100, window: 1h}\noperations:\n  videos.list: {default: 1}\n"))
	if err != nil {
		t.Fatal(err)
	}
	var out lockedLog
	now := clocktest.NewFake(time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC))
	r, err := NewRedis(c, "beat", costs, memLedger("beat"), NoUpstreamClock, now, Options{Timeout: 5 * time.Second, Logger: slog.New(slog.NewTextHandler(&out, nil))})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := r.ApplyConfig(ctx); err != nil {
		t.Fatal(err)
	}
	if err := r.Heartbeat(ctx); err != nil {
		t.Fatal(err)
	}
	srv.Stop()
	for range 3 * 30 { // three minutes of a Beat every 2 s
		if err := r.Heartbeat(ctx); err == nil {
			t.Fatal("a heartbeat with Redis stopped: no error")
		}
		now.Advance(2 * time.Second)
	}
	srv.Restart(t)
	// The client dials again on its own time: wait for the answer, not
	// for a length of time.
	for deadline := time.Now().Add(30 * time.Second); r.Heartbeat(ctx) != nil; {
		if time.Now().After(deadline) {
			t.Fatal("the heartbeat never reached the restarted Redis")
		}
		time.Sleep(20 * time.Millisecond)
	}
	text := out.String()
	if n := strings.Count(text, "quota limiter unreachable"); n != 1 {
		t.Errorf("the outage's start said %d times, want 1:\n%s", n, text)
	}
	if n := strings.Count(text, "quota limiter still unreachable"); n != 3 {
		t.Errorf("three minutes down: %d reminders, want 3 (one a minute):\n%s", n, text)
	}
	if !strings.Contains(text, "quota limiter reachable again") || !strings.Contains(text, "down_for=3m0s") {
		t.Errorf("the outage's end is not said with how long it lasted:\n%s", text)
	}
}

// lockedLog is a log's text that the limiter's goroutines may write to.
type lockedLog struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

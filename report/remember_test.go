package report_test

import (
	"context"
	"testing"
	"time"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/internal/rig/clocktest"
	"github.com/ingestworks/ingest/report"
)

// countingStore answers a fixed ledger and counts its reads.
type countingStore struct {
	report.NoDB
	calls []ingest.Call
	reads int
}

func (s *countingStore) Calls(_ context.Context, _ string, since time.Time) ([]ingest.Call, error) {
	s.reads++
	var out []ingest.Call
	for _, c := range s.calls {
		if !c.At.Before(since) {
			out = append(out, c)
		}
	}
	return out, nil
}

func (s *countingStore) PassCosts(context.Context, string, time.Time) (map[string]map[string]float64, error) {
	s.reads++
	return map[string]map[string]float64{"US": {"default": 1}}, nil
}

// The ledger is read once while its stamp stays the same, each later ask
// answered from what was read (a later since cut from it), and read again
// as soon as the stamp moves or the keep has passed.
func TestRememberedReadsTheLedgerOnce(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	clk := clocktest.NewFake(now)
	s := &countingStore{calls: []ingest.Call{{ID: "a", At: now.Add(-3 * time.Hour)}, {ID: "b", At: now.Add(-time.Hour)}}}
	stamp := "1"
	r := &report.Remembered{Store: s, Keep: time.Hour, Clock: clk, Stamp: func(context.Context, string) (string, error) { return stamp, nil }}
	for i, since := range []time.Duration{4 * time.Hour, 2 * time.Hour, 4 * time.Hour} {
		got, err := r.Calls(ctx, "k", now.Add(-since))
		if err != nil {
			t.Fatal(err)
		}
		if want := map[int]int{0: 2, 1: 1, 2: 2}[i]; len(got) != want {
			t.Errorf("ask %d (since %s): %d calls, want %d", i, since, len(got), want)
		}
		if _, err := r.PassCosts(ctx, "k", now.Add(-24*time.Hour)); err != nil {
			t.Fatal(err)
		}
	}
	if s.reads != 2 {
		t.Errorf("three reports read the ledger %d times, want 2 (the calls once, the costs once)", s.reads)
	}
	s.calls = append(s.calls, ingest.Call{ID: "c", At: now})
	stamp = "2"
	got, _ := r.Calls(ctx, "k", now.Add(-4*time.Hour))
	if len(got) != 3 || s.reads != 3 {
		t.Errorf("after the ledger moved: %d calls after %d reads, want 3 after 3", len(got), s.reads)
	}
	clk.Advance(time.Hour + time.Millisecond)
	r.Calls(ctx, "k", now.Add(-4*time.Hour))
	if s.reads != 4 {
		t.Errorf("past the keep: %d reads, want 4", s.reads)
	}
}

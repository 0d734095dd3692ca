package jobs

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/ingestworks/ingest"
)

// A backfill's summary says what this invocation and all of them stored,
// how to go on, and turns a limiter out of reach into the error that says
// nothing was sent.
func TestBackfillSummary(t *testing.T) {
	t.Parallel()
	retry := time.Date(2026, 11, 22, 8, 0, 0, 0, time.UTC)
	down := fmt.Errorf("limiter: %w", ingest.ErrUnavailable)
	for _, c := range []struct {
		name    string
		res     BackfillResult
		want    []string
		wantErr string
	}{
		{"stopped by the quota", BackfillResult{Resumed: true, Cursor: ingest.Cursor{Pages: 5, Videos: 250},
			Outcome: Outcome{Region: "DE", Pages: 2, Videos: 100, Units: map[string]int64{"search": 200, "default": 2},
				RunEnd: ingest.RunEnd{Status: ingest.StatusStopped, Message: "the search pool is spent", RetryAt: retry}}},
			[]string{"resumed the backfill at page 4\n", "backfill DE: stopped; this run: 2 pages, 100 videos, default 2, search 200 units; in all: 5 pages, 250 videos\n",
				"  the search pool is spent\n", "  the quota has room again at 2026-11-22T08:00:00Z; run the same command then to continue\n"}, ""},
		{"interrupted", BackfillResult{Outcome: Outcome{Region: "DE", RunEnd: ingest.RunEnd{Status: ingest.StatusInterrupted}}},
			[]string{"  run the same command again to continue\n"}, ""},
		{"limiter down", BackfillResult{Outcome: Outcome{Region: "DE", Err: down, RunEnd: ingest.RunEnd{Status: ingest.StatusFailed}}},
			nil, "the quota limiter cannot be reached, and a search is refused while it is (its pool has no fail_open): nothing was sent upstream: limiter: unavailable"},
		{"failed", BackfillResult{Outcome: Outcome{Region: "DE", Err: errors.New("boom"), RunEnd: ingest.RunEnd{Status: ingest.StatusFailed}}},
			nil, "boom"},
	} {
		t.Run(c.name, func(t *testing.T) {
			var b strings.Builder
			err := c.res.Summary(&b)
			for _, w := range c.want {
				if !strings.Contains(b.String(), w) {
					t.Errorf("got\n%s\nwant it to contain %q", b.String(), w)
				}
			}
			if got := fmt.Sprint(err); (c.wantErr == "" && err != nil) || (c.wantErr != "" && got != c.wantErr) {
				t.Errorf("error: got %v, want %q", err, c.wantErr)
			}
			if c.wantErr != "" && !errors.Is(err, c.res.Err) {
				t.Errorf("error %v does not wrap %v", err, c.res.Err)
			}
		})
	}
}

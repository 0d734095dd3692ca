package jobs_test

import (
	"context"
	"strings"
	"testing"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/jobs"
)

// cursors holds one backfill's cursor, or none.
type cursors struct {
	cur ingest.Cursor
	ok  bool
}

func (c cursors) Cursor(context.Context, string) (ingest.Cursor, bool, error) {
	return c.cur, c.ok, nil
}

// TestPagesLeftCountsAsTheRunDoes: a new backfill, or one restarted, has
// every page left; one that resumes, the search's last pages; a complete
// one, none.
func TestPagesLeftCountsAsTheRunDoes(t *testing.T) {
	b := &jobs.Backfill{Query: ingest.SearchQuery{Region: "US"}}
	for _, tc := range []struct {
		name    string
		c       cursors
		restart bool
		want    int
	}{
		{"new", cursors{}, false, jobs.SearchMaxPages},
		{"resumed", cursors{ingest.Cursor{Pages: 3}, true}, false, jobs.SearchMaxPages - 3},
		{"complete", cursors{ingest.Cursor{Pages: 3, Done: true}, true}, false, 0},
		{"complete, restarted", cursors{ingest.Cursor{Pages: 3, Done: true}, true}, true, jobs.SearchMaxPages},
	} {
		if got, err := b.PagesLeft(context.Background(), tc.c, tc.restart); err != nil || got != tc.want {
			t.Errorf("%s: %d, %v; want %d", tc.name, got, err, tc.want)
		}
	}
}

// forgotten is a Forgetter that notes the key it forgot.
type forgotten struct{ key *string }

func (f forgotten) DeleteCursor(_ context.Context, key string) error { *f.key = key; return nil }

// TestRestartForgetsTheCursorAndSaysSo: a restarted backfill forgets its
// own cursor and says it runs from its first page.
func TestRestartForgetsTheCursorAndSaysSo(t *testing.T) {
	b := &jobs.Backfill{ID: ingest.BackfillID{Query: "q", Region: "US"}}
	var key string
	var out strings.Builder
	if err := b.Restart(context.Background(), forgotten{&key}, &out); err != nil {
		t.Fatal(err)
	}
	if key != b.ID.Key() || !strings.Contains(out.String(), "from its first page (--restart)") {
		t.Errorf("forgot %q, said %q; want %q forgotten and the restart said", key, out.String(), b.ID.Key())
	}
}

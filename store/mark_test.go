package store

import (
	"context"
	"testing"
	"time"

	"github.com/ingestworks/ingest"
)

// TestDataMarkMovesWithWhatPagesShow: the mark moves when a run lands and
// a video is refreshed; not when nothing changed. Its time is when the
// data last changed: a run's end, a refresh; the same read again.
func TestDataMarkMovesWithWhatPagesShow(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	eachStore(t, func(t *testing.T, db *DB) {
		seen := map[string]string{}
		var changed time.Time
		mark := func(step string) string {
			t.Helper()
			m, at, err := db.DataMark(ctx)
			changed = at
			if err != nil {
				t.Fatal(err)
			}
			for was, at := range seen {
				if at == m {
					t.Errorf("%s: the mark %q is %s's", step, m, was)
				}
			}
			seen[step] = m
			return m
		}
		mark("empty")
		for i, v := range []ingest.Video{vid("a", "a video"), vid("b", "b video")} {
			at := t0.Add(time.Duration(i) * time.Hour)
			id, err := db.StartRun(ctx, "US", "", ingest.Trending, at)
			if err != nil {
				t.Fatal(err)
			}
			if err := db.SavePage(ctx, id, page(ingest.Trending, "US", 1, at, v)); err != nil {
				t.Fatal(err)
			}
			if err := db.FinishRun(ctx, id, ingest.RunEnd{Status: ingest.StatusCompleted, At: at.Add(time.Minute)}); err != nil {
				t.Fatal(err)
			}
		}
		m := mark("two runs landed")
		if want := t0.Add(time.Hour + time.Minute); !changed.Equal(want) {
			t.Errorf("two runs landed, the last ending at %s: changed at %s", want, changed)
		}
		if again, at, _ := db.DataMark(ctx); again != m || !at.Equal(changed) {
			t.Errorf("nothing changed, the mark moved: %q at %s, %q at %s", m, changed, again, at)
		}
		if err := db.Refreshed(ctx, []ingest.Video{vid("b", "b video, retitled")}, t0.Add(3*time.Hour)); err != nil {
			t.Fatal(err)
		}
		mark("a video refreshed")
		if want := t0.Add(3 * time.Hour); !changed.Equal(want) {
			t.Errorf("a video refreshed at %s: changed at %s", want, changed)
		}
	})
}

// TestFirstChartAt is the start of a chart's first stored run; none for a
// chart without one.
func TestFirstChartAt(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	eachStore(t, func(t *testing.T, db *DB) {
		if _, ok, err := db.FirstChartAt(ctx, "US", ""); ok || err != nil {
			t.Fatalf("no run: got ok %v, %v", ok, err)
		}
		for i := range 2 {
			at := t0.Add(time.Duration(i) * time.Hour)
			id, err := db.StartRun(ctx, "US", "", ingest.Trending, at)
			if err != nil {
				t.Fatal(err)
			}
			if err := db.SavePage(ctx, id, page(ingest.Trending, "US", 1, at, vid("a", "a video"))); err != nil {
				t.Fatal(err)
			}
			if err := db.FinishRun(ctx, id, ingest.RunEnd{Status: ingest.StatusCompleted, At: at.Add(time.Minute)}); err != nil {
				t.Fatal(err)
			}
		}
		got, ok, err := db.FirstChartAt(ctx, "US", "")
		if err != nil || !ok || !got.Equal(t0) {
			t.Errorf("got %v %v %v, want %v", got, ok, err, t0)
		}
		if _, ok, _ := db.FirstChartAt(ctx, "US", "10"); ok {
			t.Errorf("the music chart, never run, has a first run")
		}
	})
}

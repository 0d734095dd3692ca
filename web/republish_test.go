package web

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/ingestworks/ingest/clock"
	"github.com/ingestworks/ingest/store"
)

// landed is a database whose mark and changes a test moves.
type landed struct {
	mu      sync.Mutex
	mark    string
	changed time.Time
	changes store.Changes
}

func (l *landed) DataMark(context.Context) (string, time.Time, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.mark, l.changed, nil
}

func (l *landed) ChangesSince(context.Context, time.Time) (store.Changes, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.changes, nil
}

// land moves the mark to n (its oldest run and count at oldest: a prune
// raises it) with videos changed.
func (l *landed) land(n, oldest int, videos ...string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.mark = fmt.Sprintf("%d %d 0 0 0 0 0 %d", n, oldest, oldest)
	l.changed = time.Now()
	l.changes = store.Changes{Videos: videos}
}

// TestPublishOnLandingsAsksWhatChanged: the daemon's publish asks every
// page first, then only the pages a landing changed; a failed publish is
// asked again at the next look; a prune, or an hour since the last whole
// publish, asks every page again; an unmoved mark asks nothing.
func TestPublishOnLandingsAsksWhatChanged(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		db := &landed{}
		db.land(1, 1)
		var mu sync.Mutex
		var asked [][]string
		fail := false
		publish := func(_ context.Context, only []string) error {
			mu.Lock()
			defer mu.Unlock()
			asked = append(asked, only)
			if fail {
				return errors.New("disk full")
			}
			return nil
		}
		last := func() (int, []string) {
			mu.Lock()
			defer mu.Unlock()
			return len(asked), asked[len(asked)-1]
		}
		look := func() { time.Sleep(publishEvery); synctest.Wait() }
		stop := PublishOnLandings(context.Background(), db, clock.System, publish)
		defer stop()
		synctest.Wait()
		if n, only := last(); n != 1 || only != nil {
			t.Fatalf("the start: %d publishes, the last asking %v; want one of every page", n, only)
		}
		look()
		if n, _ := last(); n != 1 {
			t.Errorf("an unmoved mark: %d publishes, want still one", n)
		}
		db.land(2, 1, "abc")
		look()
		if n, only := last(); n != 2 || !slices.Contains(only, "/videos/abc") || !slices.Contains(only, "/api/v1/videos/abc") {
			t.Errorf("a landing: %d publishes, the last asking %v; want a second asking the video's pages", n, only)
		}
		mu.Lock()
		fail = true
		mu.Unlock()
		db.land(3, 1, "def")
		look()
		mu.Lock()
		fail = false
		mu.Unlock()
		look()
		if n, only := last(); n != 4 || !slices.Contains(only, "/videos/def") {
			t.Errorf("after a failed publish: %d publishes, the last asking %v; want it asked again", n, only)
		}
		db.land(4, 2, "ghi")
		look()
		if n, only := last(); n != 5 || only != nil {
			t.Errorf("after a prune: %d publishes, the last asking %v; want every page", n, only)
		}
		time.Sleep(publishWholeEvery)
		db.land(5, 2, "jkl")
		look()
		if n, only := last(); n != 6 || only != nil {
			t.Errorf("an hour after the last whole publish: %d publishes, the last asking %v; want every page", n, only)
		}
	})
}

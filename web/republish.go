package web

// A daemon's publish (run --publish) kept up with its landings: when the
// data's mark moves, the site is published again, whole or only the pages
// the changes name, beside the passes and never in their way.

import (
	"context"
	"time"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/clock"
	"github.com/ingestworks/ingest/store"
)

// Landings is what a daemon's publish reads of the database: the data's
// mark and what changed after a time.
type Landings interface {
	DataMark(ctx context.Context) (mark string, changed time.Time, err error)
	ChangesSince(ctx context.Context, since time.Time) (store.Changes, error)
}

// publishEvery is how often the daemon reads the data mark for a landing
// to publish: a landing reaches the directory this long after the run
// stored it at most, beside the publish's own time.
const publishEvery = 5 * time.Second

// publishWholeEvery is how often the daemon's publish asks every page
// again rather than those a landing changed: what a change named no page
// for (a writer's clock behind another's) reaches the directory within it.
const publishWholeEvery = time.Hour

// PublishOnLandings calls publish at the start and each time db's data
// mark moved since the last publish that succeeded, in its own goroutine,
// one at a time; a failed one is tried again at the next look. The first
// publish asks every page (only nil), and so does one after a prune or
// once publishWholeEvery has passed; the others ask the pages the changes
// since the last publish name (ChangedPaths), as a cache in front is
// purged of them. The function returned stops it, a publish in flight
// left staged and dropped.
func PublishOnLandings(ctx context.Context, db Landings, clk ingest.Clock, publish func(ctx context.Context, only []string) error) (stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		tick := clock.NewTicker(publishEvery)
		defer tick.Stop()
		published, since, whole := "", time.Time{}, time.Time{}
		for {
			mark, changed, err := db.DataMark(ctx)
			if err == nil && mark != published {
				only := changedPaths(ctx, db, published, mark, since, clk.Now().Sub(whole))
				if publish(ctx, only) == nil {
					published, since = mark, changed
					if only == nil {
						whole = clk.Now()
					}
				}
			}
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
		}
	}()
	return func() { cancel(); <-done }
}

// changedPaths are the paths a publish after the one of mark before
// (whose data changed at since) asks, the data's mark being now: nil, for
// every page, when there was none, a prune took data away, the last whole
// publish is publishWholeEvery old (sinceWhole), or what changed cannot be
// read or named page by page.
func changedPaths(ctx context.Context, db Landings, before, now string, since time.Time, sinceWhole time.Duration) []string {
	if before == "" || store.Pruned(before, now) || sinceWhole >= publishWholeEvery {
		return nil
	}
	c, err := db.ChangesSince(ctx, since)
	if err != nil {
		return nil
	}
	paths, all := ChangedPaths(c)
	if all {
		return nil
	}
	return append([]string{}, paths...)
}

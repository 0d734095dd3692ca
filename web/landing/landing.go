// Package landing tells the caches in front of the readers' site of each
// landing: when the data mark moves, each cache is told to drop exactly
// the answers the move changed, by the keys those answers carry (package
// edge): what the store gained since the mark it was last purged up to
// (store.DB.ChangesSince), or the whole site after a prune, which takes
// away what no key of what is left names, or for a cache never purged. A
// cache in front of a --public listener asks the origin little, so the
// site's watcher of its kept answers, which stops when no reader asks,
// cannot be the one to see the move: a watcher per cache reads the mark
// at the start and at every tick for the server's life.
//
// The mark a cache was last purged up to is kept in the database
// (store.DB.Purged), not in the process, and moved only once the cache
// took the purge: a landing made while every replica was down, or while
// the cache was unreachable past the purge's retries, is purged by the
// first replica to read the mark after. Replicas that race may both purge
// a move (a purge is idempotent); only one moves the kept mark past it. A
// database that takes no writes (a read-only file) has the process keep
// each cache's mark, so that it costs a cache no purge of the whole site
// each tick.
//
// The mark is made the one the site knows before the purge is told, so
// that the cache's first request after it is answered from the new data.
// The package knows no page: which keys a change names, and what the site
// keeps of its answers across a move, the site says (Site).
package landing

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/ingestworks/ingest/clock"
	"github.com/ingestworks/ingest/store"
	"github.com/ingestworks/ingest/web/edge"
)

// Purger is the caches in front of a --public listener, each told to
// drop the answers carrying keys (edge.SurrogateKey).
type Purger interface {
	// Caches name each cache, the name its purged mark is kept under.
	Caches() []string
	// Purge tells the cache at index cache to drop the answers carrying
	// keys, again after a failure, and says whether it took them.
	Purge(ctx context.Context, cache int, keys []string) error
}

// Marks is what the watchers read and keep in the database (store.DB).
type Marks interface {
	DataMark(ctx context.Context) (mark string, changed time.Time, err error)
	Purged(ctx context.Context, cache string) (mark string, changed time.Time, found bool, err error)
	KeepPurged(ctx context.Context, cache, was string, found bool, mark string, changed time.Time) (bool, error)
	ChangesSince(ctx context.Context, since time.Time) (store.Changes, error)
}

// Site is what the watchers move in the site whose answers the caches
// keep.
type Site interface {
	// Know makes mark, changed at changed, the one the site's requests
	// take.
	Know(mark string, changed time.Time)
	// Keys are the keys of the answers c changes.
	Keys(c store.Changes) []string
	// KeepUnchanged keeps each answer built under from that none of keys
	// names as the answer under mark, rather than build it again.
	KeepUnchanged(from, mark string, changed time.Time, keys []string)
}

// Watchers are the watchers of a server's life, one per cache.
type Watchers struct {
	marks   Marks
	purger  Purger
	site    Site
	timeout time.Duration // each read's and each write's bound
	log     *slog.Logger
	stop    context.CancelFunc
	wg      sync.WaitGroup
	mu      sync.Mutex
	mine    map[int]kept // the marks the database would not keep
}

// kept is a mark a cache was purged up to, and its time.
type kept struct {
	mark    string
	changed time.Time
}

// Start starts a watcher per cache of p, each purging it of every move of
// the mark at once and every tick; timeout bounds each read and write.
func Start(m Marks, p Purger, site Site, tick, timeout time.Duration, log *slog.Logger) *Watchers {
	ctx, stop := context.WithCancel(context.Background())
	w := &Watchers{marks: m, purger: p, site: site, timeout: timeout, log: log, stop: stop}
	for i, name := range p.Caches() {
		w.wg.Add(1)
		go w.watch(ctx, i, name, tick)
	}
	return w
}

// Stop ends the watchers, at once and for good, once what they were
// telling a cache is given up.
func (w *Watchers) Stop() {
	w.stop()
	w.wg.Wait()
}

// watch purges the cache at index cache (named name) of each move of the
// mark from the one kept for it, at once and every tick until ctx ends.
func (w *Watchers) watch(ctx context.Context, cache int, name string, every time.Duration) {
	defer w.wg.Done()
	tick := clock.NewTicker(every)
	defer tick.Stop()
	for {
		w.purgeMoved(ctx, cache, name)
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// purgeMoved reads the mark and the one kept for the cache; when they
// differ, it makes the mark the one known, tells the cache the keys of
// what changed and, once it took them, keeps the mark for it.
func (w *Watchers) purgeMoved(ctx context.Context, cache int, name string) {
	read, cancel := context.WithTimeout(ctx, w.timeout)
	defer cancel()
	mark, changed, err := w.marks.DataMark(read)
	if err != nil {
		return // the readers see the same: the next read tries again
	}
	was, since, found, err := w.marks.Purged(read, name)
	if err != nil {
		w.log.Warn("web: read the mark the cache in front was purged up to", "cache", name, "err", err)
		return
	}
	if own, ok := w.own(cache); ok { // the database takes no writes: this process's own mark
		was, since, found = own.mark, own.changed, true
	}
	if found && was == mark {
		return
	}
	w.site.Know(mark, changed)
	keys := w.keys(read, was, since, found, mark)
	w.site.KeepUnchanged(was, mark, changed, keys)
	if len(keys) > 0 && w.purger.Purge(ctx, cache, keys) != nil {
		return // the purge said why: the mark stays, the next read purges again
	}
	// The purge may have taken the read's time; and a server closing
	// just after the cache took it still keeps the mark, so that the
	// next start does not purge again what this one did.
	write, cancel := context.WithTimeout(context.WithoutCancel(ctx), w.timeout)
	defer cancel()
	_, err = w.marks.KeepPurged(write, name, was, found, mark, changed)
	if err != nil {
		w.log.Warn("web: keep the mark the cache in front was purged up to: this process keeps it, until it stops", "cache", name, "err", err)
	}
	w.keep(cache, err != nil, kept{mark, changed})
}

// keys are the keys of what moved from the mark was (changed at since;
// found says there is one) to mark: the whole site for a cache never
// purged, whose copies may be from any time, or after a prune.
func (w *Watchers) keys(ctx context.Context, was string, since time.Time, found bool, mark string) []string {
	if !found || store.Pruned(was, mark) {
		return []string{edge.SiteKey}
	}
	c, err := w.marks.ChangesSince(ctx, since)
	if err != nil {
		w.log.Warn("web: read what changed for the caches in front: the whole site is purged", "err", err)
		return []string{edge.SiteKey}
	}
	return w.site.Keys(c)
}

// own is the mark this process keeps for the cache at index cache, if it
// keeps one.
func (w *Watchers) own(cache int) (kept, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	m, ok := w.mine[cache]
	return m, ok
}

// keep keeps m for the cache at index cache in the process when mine
// (the database did not keep it), else forgets the process's own.
func (w *Watchers) keep(cache int, mine bool, m kept) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !mine {
		delete(w.mine, cache)
		return
	}
	if w.mine == nil {
		w.mine = map[int]kept{}
	}
	w.mine[cache] = m
}

package web

import (
	"context"
	"slices"
	"sync"
	"time"

	"github.com/ingestworks/ingest/clock"
	"github.com/ingestworks/ingest/store"
	"github.com/ingestworks/ingest/web/edge"
)

// Purger is the caches in front of a --public listener, each told to
// drop the answers carrying keys (Surrogate-Key, shared.go).
type Purger interface {
	// Caches name each cache, the name its purged mark is kept under.
	Caches() []string
	// Purge tells the cache at index cache to drop the answers carrying
	// keys, again after a failure, and says whether it took them.
	Purge(ctx context.Context, cache int, keys []string) error
}

// When the data mark moves, each cache in front is told to drop exactly
// the answers the move changed (Config.Purge), by the keys those answers
// carry (shared.go): what the store gained since the mark it was last
// purged up to (store.ChangesSince), or the whole site after a prune,
// which takes away what no key of what is left names, or for a cache never
// purged. A cache in front of a --public listener asks the origin little,
// so the readers' watcher (cache.go), which stops when no reader asks,
// cannot be the one to see the move: with a Purge, a watcher per cache
// reads the mark at the start and every markEvery for the server's life.
//
// The mark a cache was last purged up to is kept in the database
// (store.Purged), not in the process, and moved only once the cache took
// the purge: a landing made while every replica was down, or while the
// cache was unreachable past the purge's retries, is purged by the first
// replica to read the mark after. Replicas that race may both purge a move
// (a purge is idempotent); only one moves the kept mark past it.
//
// The mark is made the one known before the purge is told, so that the
// cache's first request after it is answered from the new data; a copy
// from before served while its new one is built (cache.go, freshWait) is
// sent for no cache to keep.

// purgeWatchers start a watcher per cache in front; Close ends them.
func (s *Server) purgeWatchers() {
	ctx, stop := context.WithCancel(context.Background())
	s.purging.stop = stop
	for i, name := range s.cfg.Purge.Caches() {
		s.purging.wg.Add(1)
		go s.purgeWatcher(ctx, i, name)
	}
}

// purgeWatcher purges the cache at index cache (named name) of each move
// of the mark from the one kept for it, at once and every markEvery until
// ctx ends.
func (s *Server) purgeWatcher(ctx context.Context, cache int, name string) {
	defer s.purging.wg.Done()
	tick := clock.NewTicker(markEvery)
	defer tick.Stop()
	for {
		s.purgeMoved(ctx, cache, name)
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
func (s *Server) purgeMoved(ctx context.Context, cache int, name string) {
	read, cancel := context.WithTimeout(ctx, s.cfg.Timeout)
	defer cancel()
	mark, changed, err := s.cfg.DB.DataMark(read)
	if err != nil {
		return // the readers see the same: the next read tries again
	}
	kept, since, found, err := s.cfg.DB.Purged(read, name)
	if err != nil {
		s.cfg.Logger.Warn("web: read the mark the cache in front was purged up to", "cache", name, "err", err)
		return
	}
	if own, ok := s.purging.own(cache); ok { // the database takes no writes: this process's own mark
		kept, since, found = own.mark, own.changed, true
	}
	if found && kept == mark {
		return
	}
	s.knowMark(mark, changed)
	keys := s.purgeKeys(read, kept, since, found, mark)
	s.keepUnchanged(kept, mark, changed, keys)
	if len(keys) > 0 && s.cfg.Purge.Purge(ctx, cache, keys) != nil {
		return // the purge said why: the mark stays, the next read purges again
	}
	// The purge may have taken the read's time; and a server closing
	// just after the cache took it still keeps the mark, so that the
	// next start does not purge again what this one did.
	write, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.cfg.Timeout)
	defer cancel()
	_, err = s.cfg.DB.KeepPurged(write, name, kept, found, mark, changed)
	if err != nil {
		s.cfg.Logger.Warn("web: keep the mark the cache in front was purged up to: this process keeps it, until it stops", "cache", name, "err", err)
	}
	s.purging.keep(cache, err != nil, keptMark{mark, changed})
}

// purged reports whether caches in front are purged of each landing.
func (s *Server) purged() bool { return s.cfg.Purge != nil && s.cfg.DB != nil }

// keepUnchanged makes each kept answer built under from whose keys the
// move to mark, changed at changed, names none of (keys: what the purge
// tells the caches) the answer under mark as it is, rather than build it
// again: the caches in front keep their copies of it on the same keys.
// What the move changed stays under from, to be built when asked. An
// answer with no keys, or of a route no cache keeps, is never kept past
// its mark; the whole site's key keeps none.
func (s *Server) keepUnchanged(from, mark string, changed time.Time, keys []string) {
	if slices.Contains(keys, edge.SiteKey) {
		return
	}
	moved := make(map[string]bool, len(keys))
	for _, k := range keys {
		moved[k] = true
	}
	s.answers.set.Update(from, func(a *answer) (*answer, bool) {
		if !a.shared || len(a.keys) == 0 || slices.ContainsFunc(a.keys, func(k string) bool { return moved[k] }) {
			return nil, false
		}
		return a.under(mark, changed), true
	})
}

// keptMark is a mark a cache was purged up to, and its time.
type keptMark struct {
	mark    string
	changed time.Time
}

// purging is what the purge's watchers share: how to end them, and each
// cache's mark this process purged it up to when the database would not
// keep it (a read-only file), so that a database that takes no writes
// costs a cache no purge of the whole site each second.
type purging struct {
	stop context.CancelFunc
	wg   sync.WaitGroup
	mu   sync.Mutex
	mine map[int]keptMark
}

// own is the mark this process keeps for the cache at index cache, if it
// keeps one.
func (p *purging) own(cache int) (keptMark, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	m, ok := p.mine[cache]
	return m, ok
}

// keep keeps m for the cache at index cache in the process when mine
// (the database did not keep it), else forgets the process's own.
func (p *purging) keep(cache int, mine bool, m keptMark) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !mine {
		delete(p.mine, cache)
		return
	}
	if p.mine == nil {
		p.mine = map[int]keptMark{}
	}
	p.mine[cache] = m
}

// knowMark makes mark, changed at changed, the one known: newer than any
// known, the requests take it until theirs is due.
func (s *Server) knowMark(mark string, changed time.Time) {
	s.answers.markMu.Lock()
	s.answers.mark, s.answers.changed = mark, changed
	s.answers.markMu.Unlock()
}

// purgeKeys are the keys of what moved from the mark kept (changed at
// since; found says there is one) to mark: the whole site for a cache
// never purged, whose copies may be from any time, or after a prune.
func (s *Server) purgeKeys(ctx context.Context, kept string, since time.Time, found bool, mark string) []string {
	if !found || store.Pruned(kept, mark) {
		return []string{edge.SiteKey}
	}
	c, err := s.cfg.DB.ChangesSince(ctx, since)
	if err != nil {
		s.cfg.Logger.Warn("web: read what changed for the caches in front: the whole site is purged", "err", err)
		return []string{edge.SiteKey}
	}
	return changedKeys(c)
}

// changedKeys are the keys of the answers c changes: each chart a run
// landed in, with its feed and the pages that list every chart (the front
// page, the worldwide page and feed, the sitemap); each video, which
// names every answer listing it; and every search, whose matches a video
// changed may join. A chart new to the site changes every chart page (its
// picker names it): the whole site's key.
func changedKeys(c store.Changes) []string {
	if len(c.New) > 0 {
		// A chart new to the site is in every chart page's picker.
		return []string{edge.SiteKey}
	}
	var keys []string
	for _, ch := range c.Charts {
		keys = append(keys, edge.Chart(ch.Region, ch.Category))
		if ch.Category == "" {
			keys = append(keys, edge.Feed(ch.Region))
		}
	}
	if len(c.Charts) > 0 {
		keys = append(keys, frontKey, worldwideKey, edge.Feed(worldwideKey), "sitemap")
	}
	for _, id := range c.Videos {
		keys = append(keys, edge.Video(id))
	}
	if len(c.Charts) > 0 || len(c.Videos) > 0 {
		keys = append(keys, searchKey)
	}
	return slices.Compact(keys)
}

package web

import (
	"context"
	"slices"
	"time"

	"github.com/ingestworks/ingest/clock"
	"github.com/ingestworks/ingest/store"
)

// When the data mark moves, the caches in front are told to drop exactly
// the answers the move changed (Config.Purge), by the keys those answers
// carry (shared.go): what the store gained since the mark before
// (store.ChangesSince), or the whole site after a prune, which takes away
// what no key of what is left names. A cache in front of a --public
// listener asks the origin little, so the readers' watcher (cache.go),
// which stops when no reader asks, cannot be the one to see the move:
// with a Purge, a watcher of its own reads the mark every markEvery for
// the server's life.
//
// The mark is made the one known before the purge is told, so that the
// cache's first request after it is answered from the new data; a copy
// from before served while its new one is built (cache.go, freshWait) is
// sent for no cache to keep.

// purgeWatcher reads the mark every markEvery until Close and tells the
// purge what each move from mark (changed at changed) changed.
func (s *Server) purgeWatcher(mark string, changed time.Time) {
	tick := clock.NewTicker(markEvery)
	defer tick.Stop()
	for {
		select {
		case <-s.answers.closed:
			return
		case <-tick.C:
		}
		mark, changed = s.purgeMoved(mark, changed)
	}
}

// purgeMoved reads the mark; when it moved from before (changed at
// since), it makes it the one known and tells the purge the keys of what
// changed. It is the mark to compare the next with.
func (s *Server) purgeMoved(before string, since time.Time) (string, time.Time) {
	ctx, cancel := context.WithTimeout(context.Background(), s.cfg.Timeout)
	defer cancel()
	mark, changed, err := s.cfg.DB.DataMark(ctx)
	if err != nil || mark == before {
		return before, since
	}
	s.answers.markMu.Lock()
	s.answers.mark, s.answers.changed = mark, changed // newer than any known: the requests take it until theirs is due
	s.answers.markMu.Unlock()
	if before == "" {
		return mark, changed // the first read: nothing to compare with
	}
	if store.Pruned(before, mark) {
		s.cfg.Purge([]string{siteKey})
		return mark, changed
	}
	c, err := s.cfg.DB.ChangesSince(ctx, since)
	if err != nil {
		s.cfg.Logger.Warn("web: read what changed for the caches in front: the whole site is purged", "err", err)
		s.cfg.Purge([]string{siteKey})
		return mark, changed
	}
	if keys := changedKeys(c); len(keys) > 0 {
		s.cfg.Purge(keys)
	}
	return mark, changed
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
		return []string{siteKey}
	}
	var keys []string
	for _, ch := range c.Charts {
		keys = append(keys, chartKey(ch.Region, ch.Category))
		if ch.Category == "" {
			keys = append(keys, feedKeyOf(ch.Region))
		}
	}
	if len(c.Charts) > 0 {
		keys = append(keys, frontKey, worldwideKey, feedKeyOf(worldwideKey), "sitemap")
	}
	for _, id := range c.Videos {
		keys = append(keys, videoKey(id))
	}
	if len(c.Charts) > 0 || len(c.Videos) > 0 {
		keys = append(keys, searchKey)
	}
	return slices.Compact(keys)
}

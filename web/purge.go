package web

import (
	"slices"
	"time"

	"github.com/ingestworks/ingest/store"
	"github.com/ingestworks/ingest/web/edge"
)

// When the data mark moves, each cache in front is told to drop exactly
// the answers the move changed (Config.Purge), by the keys those answers
// carry (shared.go): the watchers are package landing's; the site says
// which keys a change names (changedKeys), makes the new mark the one its
// requests take (knowMark) and keeps what the move left alone
// (keepUnchanged). A copy from before served while its new one is built
// (cache.go, freshWait) is sent for no cache to keep.

// siteMoves is the site as package landing moves it.
type siteMoves struct{ s *Server }

func (l siteMoves) Know(mark string, changed time.Time) { l.s.knowMark(mark, changed) }

func (l siteMoves) Keys(c store.Changes) []string { return changedKeys(c) }

func (l siteMoves) KeepUnchanged(from, mark string, changed time.Time, keys []string) {
	l.s.keepUnchanged(from, mark, changed, keys)
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

// knowMark makes mark, changed at changed, the one known: newer than any
// known, the requests take it until theirs is due.
func (s *Server) knowMark(mark string, changed time.Time) {
	s.answers.markMu.Lock()
	s.answers.mark, s.answers.changed = mark, changed
	s.answers.markMu.Unlock()
}

// changedKeys are the keys of the answers c changes: each chart a run
// siteMoves in, with its feed and the pages that list every chart (the front
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

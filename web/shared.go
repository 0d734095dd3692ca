package web

import (
	"net/http"
	"strings"

	"github.com/ingestworks/ingest/web/edge"
	"github.com/ingestworks/ingest/web/transport"
)

// Who may keep an answer (docs/reference/api/caching.md). A
// reader's page changes only when a run lands, so on a --public listener
// an anonymous reader's answer is one every cache in front may keep and
// serve to the next reader: Cache-Control public, with the lifetimes of
// the site's edge.Policy, and a Surrogate-Key naming what it shows, by
// which a cache can drop exactly the answers a landing changed. Anything
// tied to a person or to the operator is the requester's alone and kept
// by nobody: private, no-store, with no key.
//
//   - shared: a reader's route (Route.shared) answering 200 to a GET or
//     HEAD with no credential (edge.Credentialed) on a --public listener;
//   - revalidated (no-cache, as ever): the same on a listener that is not
//     --public and has no token, where the one reader is this host's;
//   - private, no-store: everything else: a token, a session or any
//     cookie, the operator's routes, sign-in, the probes and the metrics,
//     every status but 200.
//
// A handler marks an answer that may be kept by setting Cache-Control to
// transport.Revalidate; the transport (send, serveAnswer) turns the mark into the
// header the rules above give, so that no handler decides who keeps it.

// shared reports whether rt's answers may be a shared cache's: a reader's
// data (a page or its JSON) or the readers' static files. Sign-in, the
// probes and the operator's routes never are.
func (rt Route) shared() bool {
	return rt.Audience == Reader && (rt.Kind == Page || rt.Kind == API || rt.Pattern == staticPattern)
}

// cacheControl sets h's Cache-Control by the rules above, for an answer
// with status to r on a route that is shared or not; the handler's
// Cache-Control is its mark. A Cache-Control the handler chose itself (a
// static file under its hash) stands.
func (s *Server) cacheControl(h http.Header, r *http.Request, shared bool, status int) {
	cc := h.Get("Cache-Control")
	mayKeep := status == http.StatusOK && (r.Method == http.MethodGet || r.Method == http.MethodHead) &&
		strings.HasPrefix(cc, transport.Revalidate)
	switch {
	case mayKeep && shared && s.access == Public && !edge.Credentialed(r):
		h.Set("Cache-Control", s.cache.String())
		h.Set(edge.SurrogateKey, edge.WithSite(h.Get(edge.SurrogateKey)))
		return
	case mayKeep && shared && s.access == Open && !edge.Credentialed(r):
		h.Set("Cache-Control", transport.Revalidate)
	case status != http.StatusOK || !strings.HasPrefix(cc, "public"):
		h.Set("Cache-Control", personal)
	}
	h.Del(edge.SurrogateKey)
}

// showCards adds the keys of the videos an answer lists, after first's.
func showCards(h http.Header, first []string, cards ...VideoCard) {
	keys := first
	for _, c := range cards {
		keys = append(keys, edge.Video(c.ID))
	}
	edge.Show(h, keys...)
}

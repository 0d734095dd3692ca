package web

import (
	"net/http"

	"github.com/ingestworks/ingest/web/signin"
	"github.com/ingestworks/ingest/web/transport"
)

// The transport of every answer: the handler's answer buffered, then sent
// by package send (gzip, the validators, a 304), the site deciding who may
// keep it (cacheControl, shared.go).

// transport buffers a handler's answer and sends it, on a route whose
// answers are shared or not (Route.shared).
func (s *Server) transport(w http.ResponseWriter, r *http.Request, h http.Handler, shared bool) {
	b := transport.NewAnswer(w.Header(), http.StatusOK)
	h.ServeHTTP(b, r)
	s.send(w, r, b, shared)
}

// transported is h under transport.
func (s *Server) transported(h http.Handler, shared bool) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { s.transport(w, r, h, shared) })
}

// send sends a buffered answer, the site's rules saying who may keep it.
func (s *Server) send(w http.ResponseWriter, r *http.Request, b *transport.Answer, shared bool) {
	transport.Send(w, r, b, func(h http.Header, status int) { s.cacheControl(h, r, shared, status) })
}

// private reports whether r comes with the token or a session: not an
// anonymous reader's, outside the readers' budget (budget.go).
func (s *Server) private(r *http.Request) bool {
	if s.access == TokenRequired || r.Header.Get("Authorization") != "" {
		return true
	}
	_, err := r.Cookie(signin.CookieName)
	return err == nil
}

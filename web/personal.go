package web

import (
	"context"
	"net/http"
	"strings"
)

// On a listener whose pages anyone reads (--public) and where the operator
// can sign in, a page's header differs by who asks: a signed-in operator
// sees the Operator link and Sign out, everyone else neither. The kept
// answers (cache.go) are shared by URL, so the two never meet there:
//
//   - a request with a live session is never answered from the kept
//     answers, nor does it build one: its page is drawn for it alone and
//     sent private and no-store, so no browser or proxy keeps it either;
//   - a kept answer is always built with the anonymous header, whoever
//     asked for it, so a signed-in header can never be kept;
//   - every other page says Vary: Cookie, so that a shared cache in front
//     never hands its anonymous copy to the signed-in operator.

// personal is the Cache-Control of a page drawn for one signed-in operator.
const personal = "private, no-store"

// keptBuild marks the context of a request building a kept answer.
type keptBuild struct{}

// operatorHeader reports whether r's page is drawn with the signed-in
// operator's header: a live session, on a listener that draws it apart,
// and not a build of an answer to be kept.
func (s *Server) operatorHeader(r *http.Request) bool {
	if s.signedPages == nil || r == nil || r.Context().Value(keptBuild{}) != nil {
		return false
	}
	return s.signedIn(r)
}

// forKept is r as it builds an answer that may be kept.
func forKept(r *http.Request) *http.Request {
	return r.WithContext(context.WithValue(r.Context(), keptBuild{}, true))
}

// varyCookie adds Cookie to h's Vary, when the listener draws a header
// per session and h does not say it already.
func (s *Server) varyCookie(h http.Header) {
	if s.signedPages == nil {
		return
	}
	for _, v := range h.Values("Vary") {
		for _, f := range strings.Split(v, ",") {
			if strings.EqualFold(strings.TrimSpace(f), "Cookie") {
				return
			}
		}
	}
	h.Add("Vary", "Cookie")
}

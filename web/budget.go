package web

// The work a reader's request may start that no kept answer spares (a
// search asked once, a miss, a page's first build) costs a build; hot
// pages cost a copy from memory. A flood of the first (unique searches,
// unique misses, from many addresses: no per-client plan holds it) would
// take the CPU the readers of the hot pages need. So anonymous readers'
// builds run within one budget for the whole site: a few at once, a
// request waiting briefly for its turn and answered 503 with Retry-After
// past it. Kept answers, the watcher's builds and requests that carry a
// token or a session are outside it (docs/reference/api/dashboard.md).

import (
	"net/http"
	"strings"
	"time"

	"github.com/ingestworks/ingest/web/transport"
)

// budgetWait is how long an anonymous reader's build waits for its turn
// before the request is answered 503.
const budgetWait = time.Second

// budgetRetry is the Retry-After of a request over the budget, in seconds.
const budgetRetry = "1"

// busy is the answer of a request over the budget: 503 with Retry-After,
// as JSON for the API and a page for a reader.
func (s *Server) busy(r *http.Request) *transport.Answer {
	b := transport.NewAnswer(http.Header{}, http.StatusOK)
	b.Header().Set("Retry-After", budgetRetry)
	const msg = "the site is busy with other readers' searches and pages not kept: retry in a second (Retry-After)"
	if strings.HasPrefix(r.URL.Path, "/api/") {
		apiError(b, http.StatusServiceUnavailable, "busy", "", msg)
	} else {
		s.pageError(b, r, http.StatusServiceUnavailable, "The site is busy with other readers' searches; retry in a second.")
	}
	return b
}

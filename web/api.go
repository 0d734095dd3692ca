package web

// The API's errors and its index.

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"time"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/store"
)

// notFound is a missing video or chart: a 404. earliest, for a chart asked
// for at a time before its first run, is when that run started.
type notFound struct {
	code, msg string
	earliest  time.Time
}

func (e *notFound) Error() string { return e.msg }

// gone is a video the upstream no longer returns: a 410, from its
// tombstone (docs/explanation/terms.md).
type gone struct{ msg string }

func (e *gone) Error() string { return e.msg }

// fail answers err as JSON: 400 for bad input (naming the parameter), 404
// for what does not exist, 503 when the request ran out of time, and 500
// with no detail otherwise (the detail goes to the log, where no client
// reads paths or errors of the database).
func (s *Server) fail(w http.ResponseWriter, r *http.Request, err error) {
	status, code, param, msg := s.classify(r, err)
	retryLater(w, status)
	apiError(w, status, code, param, msg)
}

// unavailableRetry is the Retry-After of an answer the database could not
// give for now: a reader or a cache in front asks again, and the replica
// stays out of the way of a database coming back.
const unavailableRetry = "5"

// retryLater tells a client of a 503 when to ask again.
func retryLater(w http.ResponseWriter, status int) {
	if status == http.StatusServiceUnavailable {
		w.Header().Set("Retry-After", unavailableRetry)
	}
}

func (s *Server) classify(r *http.Request, err error) (status int, code, param, msg string) {
	var pe *paramError
	var nf *notFound
	var g *gone
	switch {
	case errors.As(err, &g):
		return http.StatusGone, "gone", "", g.msg
	case errors.As(err, &pe):
		return http.StatusBadRequest, "bad_parameter", pe.param, pe.Error()
	case errors.As(err, &nf):
		return http.StatusNotFound, nf.code, "", nf.msg
	case errors.Is(err, context.DeadlineExceeded):
		return http.StatusServiceUnavailable, "timeout", "", "the request took too long; narrow it and try again"
	case store.Unavailable(err):
		s.cfg.Logger.Warn("web: the database is unavailable", "path", r.URL.Path, ingest.LogErr, s.cfg.DB.Full(err))
		return http.StatusServiceUnavailable, "unavailable", "", "the database is unavailable for now; try again shortly"
	}
	s.cfg.Logger.Error("web", "path", r.URL.Path, ingest.LogErr, s.cfg.DB.Full(err))
	return http.StatusInternalServerError, "internal", "", "internal error; the server's log has the detail"
}

// apiIndexJSON is what /api/v1 answers: the routes of the API this
// listener serves, each with whose it is.
type apiIndexJSON struct {
	Version string          `json:"version"`
	Docs    string          `json:"docs"`
	Routes  []apiIndexRoute `json:"routes"`
}

type apiIndexRoute struct {
	Route    string `json:"route"`
	Audience string `json:"audience"` // "public" or "operator"
}

// apiIndex lists the API's routes, so that a client pointed at /api/v1
// finds its way.
func (s *Server) apiIndex(w http.ResponseWriter, _ *http.Request) {
	out := apiIndexJSON{Version: "v1", Docs: "docs/api.md and docs/openapi.yaml in the source"}
	for _, rt := range s.Routes() {
		if rt.Kind != API || routeName(rt.Pattern) == "" || s.cfg.Directory && !slices.Contains(PublishedAPI, rt.Pattern) {
			continue
		}
		out.Routes = append(out.Routes, apiIndexRoute{Route: rt.Pattern, Audience: rt.Audience.String()})
	}
	replyJSON(w, http.StatusOK, out)
}

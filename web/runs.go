package web

// The operator's /api/v1/runs: the runs, newest first, a page at a time.

import (
	"net/http"

	"github.com/ingestworks/ingest/store"
)

// RunsJSON is a page of runs, newest first.
type RunsJSON struct {
	Runs       []RunJSON `json:"runs"`
	NextCursor *string   `json:"next_cursor"`
}

// RunJSON is one run.
type RunJSON struct {
	ID       int64   `json:"id"`
	Region   string  `json:"region"`
	Category string  `json:"category"` // a trending run's chart: "" the unfiltered one
	Kind     string  `json:"kind"`
	Status   string  `json:"status"`
	Started  *string `json:"started"`
	Finished *string `json:"finished"`
	Pages    int     `json:"pages"`
	Videos   int     `json:"videos"`
	Message  string  `json:"message"`
	RetryAt  *string `json:"retry_at"`
}

func (s *Server) runs(r *http.Request) (RunsJSON, error) {
	region, err := regionParam(r.URL.Query().Get("region"), false)
	if err != nil {
		return RunsJSON{}, err
	}
	kind, err := kindParam(r)
	if err != nil {
		return RunsJSON{}, err
	}
	limit, err := limitParam(r, 50, maxRunsLimit)
	if err != nil {
		return RunsJSON{}, err
	}
	before, err := decodeCursor(r, "runs")
	if err != nil {
		return RunsJSON{}, err
	}
	list, err := s.cfg.DB.ListRuns(r.Context(), store.RunFilter{Region: region, Kind: kind, Before: before, Limit: limit + 1})
	if err != nil {
		return RunsJSON{}, err
	}
	out := RunsJSON{Runs: []RunJSON{}}
	for i, run := range list {
		if i == limit {
			c := encodeCursor("runs", list[i-1].RunID)
			out.NextCursor = &c
			break
		}
		out.Runs = append(out.Runs, RunJSON{ID: run.RunID, Region: run.Region, Category: run.Category, Kind: string(run.Kind), Status: string(run.Status),
			Started: stamp(run.Started), Finished: stamp(run.Finished), Pages: run.Pages, Videos: run.Videos,
			Message: run.Message, RetryAt: stamp(run.RetryAt)})
	}
	return out, nil
}

func (s *Server) apiRuns(w http.ResponseWriter, r *http.Request) {
	runs, err := s.runs(r)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	replyJSON(w, http.StatusOK, runs)
}

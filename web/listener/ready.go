package listener

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"time"
)

// Check is one of /readyz's checks: Probe's error fails it, and Passed
// says what passing means ("redis answers").
type Check struct {
	Name   string
	Passed string
	Probe  func(context.Context) error
}

// ReadyState is /readyz's body.
type ReadyState struct {
	Status string       `json:"status"` // ready or not ready
	Checks []CheckState `json:"checks"`
}

// CheckState is one check's result: Detail is Passed when it passed, the
// error when not.
type CheckState struct {
	Name   string `json:"name"`
	OK     bool   `json:"ok"`
	Detail string `json:"detail,omitempty"`
}

// readyTimeout is what all the checks of one /readyz get together: a probe
// that hangs must fail the check, not the prober's own timeout.
const readyTimeout = 2 * time.Second

// Readyz answers /readyz: 200 when every check passes, else 503, with each
// check's result.
func Readyz(checks ...Check) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithTimeout(r.Context(), readyTimeout)
		defer cancel()
		st := Ready(ctx, checks...)
		code := http.StatusOK
		if st.Status != "ready" {
			code = http.StatusServiceUnavailable
		}
		reply(w, code, st)
	})
}

// Ready runs the checks one after another.
func Ready(ctx context.Context, checks ...Check) ReadyState {
	st := ReadyState{Status: "ready"}
	for _, c := range checks {
		cs := CheckState{Name: c.Name, OK: true, Detail: c.Passed}
		if err := c.Probe(ctx); err != nil {
			cs.OK, cs.Detail, st.Status = false, err.Error(), "not ready"
		}
		st.Checks = append(st.Checks, cs)
	}
	return st
}

// reply writes st as the site's JSON answers are written: indented, and
// marked no-cache when it is 200 (the mark the site's transport reads as
// an answer that may be kept and revalidated) or no-store when it is not,
// so that no cache keeps a probe's failure.
func reply(w http.ResponseWriter, code int, st ReadyState) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	cc := "no-store"
	if code == http.StatusOK {
		cc = "no-cache"
	}
	w.Header().Set("Cache-Control", cc)
	w.WriteHeader(code)
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.Encode(st) // the status is sent: a failure here is the client gone
}

// undecider is a limiter that can say it cannot tell a new Redis from a
// wiped one (quota.Redis).
type undecider interface {
	Undecided(ctx context.Context) (string, error)
}

// WindowChecks is /readyz's check that the limiter l is not waiting
// because it cannot tell a new Redis from a wiped one (its failure names
// the command for each case); none for a limiter that cannot be so.
func WindowChecks(l any) []Check {
	u, ok := l.(undecider)
	if !ok {
		return nil
	}
	return []Check{{Name: "limiter_window", Passed: "the limiter holds the window's calls of this ledger", Probe: func(ctx context.Context) error {
		text, err := u.Undecided(ctx)
		if err == nil && text != "" {
			err = errors.New(text)
		}
		return err
	}}}
}

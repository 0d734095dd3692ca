package listener

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"reflect"
	"testing"
)

func TestReadyz(t *testing.T) {
	t.Parallel()
	ok := func(context.Context) error { return nil }
	down := func(context.Context) error { return errors.New("dial tcp: connection refused") }
	for _, tc := range []struct {
		name   string
		checks []Check
		code   int
		want   ReadyState
	}{
		{"all pass", []Check{{"limiter", "redis answers", ok}, {"database", "writable", ok}}, http.StatusOK,
			ReadyState{"ready", []CheckState{{"limiter", true, "redis answers"}, {"database", true, "writable"}}}},
		{"one fails", []Check{{"limiter", "redis answers", down}, {"database", "writable", ok}}, http.StatusServiceUnavailable,
			ReadyState{"not ready", []CheckState{{"limiter", false, "dial tcp: connection refused"}, {"database", true, "writable"}}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := httptest.NewRecorder()
			Readyz(tc.checks...).ServeHTTP(rec, httptest.NewRequest("GET", "/readyz", nil))
			var got ReadyState
			if err := json.Unmarshal(rec.Body.Bytes(), &got); err != nil || rec.Code != tc.code || !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got %d %s (%v), want %d %+v", rec.Code, rec.Body, err, tc.code, tc.want)
			}
		})
	}
}

// undecided is a limiter that says what it cannot tell, or fails to say.
type undecided struct {
	text string
	err  error
}

func (u undecided) Undecided(context.Context) (string, error) { return u.text, u.err }

// TestWindowChecksFailWhileTheLimiterCannotTell: a limiter that cannot
// tell a new Redis from a wiped one fails /readyz's window check with its
// own words; one that can passes it; a limiter that can never be so has
// no such check.
func TestWindowChecksFailWhileTheLimiterCannotTell(t *testing.T) {
	t.Parallel()
	if got := WindowChecks(struct{}{}); got != nil {
		t.Errorf("a limiter that cannot be undecided: %d checks, want none", len(got))
	}
	for _, tc := range []struct {
		name string
		l    undecided
		want string // "" for a pass
	}{
		{"decided", undecided{}, ""},
		{"undecided", undecided{text: "run ingest quota seed"}, "run ingest quota seed"},
		{"unreadable", undecided{err: errors.New("dial tcp: refused")}, "dial tcp: refused"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			checks := WindowChecks(tc.l)
			if len(checks) != 1 || checks[0].Name != "limiter_window" {
				t.Fatalf("WindowChecks = %+v, want the one limiter_window check", checks)
			}
			st := Ready(context.Background(), checks...)
			if got := st.Checks[0]; got.OK != (tc.want == "") || (tc.want != "" && got.Detail != tc.want) {
				t.Errorf("got %+v, want ok %v and %q", got, tc.want == "", tc.want)
			}
		})
	}
}

package web

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

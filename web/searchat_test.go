package web

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/ingestworks/ingest/clock"
	"github.com/ingestworks/ingest/report"
)

// TestSearchFormPointsWhereConfigured: the pages' search form and link
// point at the server's own /search, at Config.SearchURL when given (the
// policy letting the form go there), and are left out with NoSearch, the
// published site with no search to point at.
func TestSearchFormPointsWhereConfigured(t *testing.T) {
	t.Parallel()
	noReport := func(context.Context) (*report.Report, error) { return nil, errors.New("no report in this test") }
	db := audienceDB(t)
	for _, tc := range []struct {
		name      string
		searchURL string
		none      bool
		want      string // the form's tag, "" for none
	}{
		{"own", "", false, `<form action="/search" method="get" role="search">`},
		{"elsewhere", "https://search.example/find", false, `<form action="https://search.example/find" method="get" role="search">`},
		{"none", "", true, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := New(Config{Clock: clock.System, DB: db, Listen: ":8080", Public: true, Report: noReport, Meter: anyMeter(),
				SearchURL: tc.searchURL, NoSearch: tc.none})
			if err != nil {
				t.Fatal(err)
			}
			for _, path := range []string{"/", "/charts/US", "/worldwide"} {
				rec := askFrom(s, "192.0.2.7:1234", path)
				body := rec.Body.String()
				if rec.Code != 200 {
					t.Fatalf("GET %s: %d", path, rec.Code)
				}
				switch {
				case tc.want != "" && !strings.Contains(body, tc.want):
					t.Errorf("GET %s: no %s in the page", path, tc.want)
				case tc.want == "" && strings.Contains(body, `role="search"`):
					t.Errorf("GET %s: a search form with NoSearch", path)
				case tc.none && strings.Contains(body, `href="/search"`):
					t.Errorf("GET %s: a link to /search with NoSearch", path)
				}
			}
			if csp := askFrom(s, "192.0.2.7:1234", "/").Header().Get("Content-Security-Policy"); tc.searchURL != "" && !strings.Contains(csp, "form-action 'self' https://search.example;") {
				t.Errorf("policy %q: the form may not go to the search's host", csp)
			}
		})
	}
}

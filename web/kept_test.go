package web

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/ingestworks/ingest/web/kept"
)

// TestFloodOfUniqueURLsStaysBounded: thousands of unique URLs, 404s
// and searches that answer 200, leave the kept answers within their bound,
// keep no 404 at all, and never push out the chart readers keep asking
// for (it is built once in all).
func TestFloodOfUniqueURLsStaysBounded(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 21, 9, 0, 10, 0, time.UTC)
	s, _, _ := cachedServer(t, &now)
	s.answers.set = kept.NewSet[*answer](kept.Bound{Bytes: 2 << 20, Answers: 256})
	get := func(path string) int {
		rec := httptest.NewRecorder()
		s.ServeHTTP(rec, httptest.NewRequest("GET", path, nil))
		return rec.Code
	}
	if code := get("/charts/US"); code != 200 {
		t.Fatalf("/charts/US: got %d", code)
	}
	for i := range 5000 {
		if code := get(fmt.Sprintf("/videos/missing-%d", i)); code != http.StatusNotFound {
			t.Fatalf("an unknown video: got %d, want 404", code)
		}
	}
	if n, size := s.answers.set.Held(); n != 1 {
		t.Errorf("after 5000 URLs that answer 404: %d answers kept (%d bytes), want the chart's alone", n, size)
	}
	before := s.answers.builds.Load()
	for i := range 2000 {
		if code := get(fmt.Sprintf("/search?q=alpha+%d", i)); code != 200 {
			t.Fatalf("a search: got %d", code)
		}
		if i%20 == 0 {
			get("/charts/US")
		}
	}
	if n := s.answers.builds.Load() - before; n != 2000 {
		t.Errorf("2000 unique searches and a kept chart asked for 100 times: %d builds, want the searches' alone", n)
	}
	if n, size := s.answers.set.Held(); n > 256 || size > 2<<20 {
		t.Errorf("after 2000 unique searches: %d answers, %d bytes kept; bound 256, %d", n, size, 2<<20)
	}
	if n := len(s.answers.building); n != 0 {
		t.Errorf("%d builds left under way", n)
	}
	if s.answers.set.Get("/charts/US") == nil {
		t.Errorf("the chart asked for every twenty requests is no longer kept")
	}
}

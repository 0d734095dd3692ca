package web

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

// TestKeptSetKeepsHotAnswers: past its bound the set drops answers asked
// for once, never one asked for again and again, and holds no more than
// its bound in bytes and in answers.
func TestKeptSetKeepsHotAnswers(t *testing.T) {
	t.Parallel()
	for _, b := range []KeptBound{{Bytes: 1 << 20, Answers: 64}, {Bytes: 40 << 10, Answers: 1000}} {
		t.Run(fmt.Sprintf("%d bytes, %d answers", b.Bytes, b.Answers), func(t *testing.T) {
			t.Parallel()
			s := newKeptSet(b)
			body := func() *answer { return &answer{body: make([]byte, 1000)} }
			hot := []string{"/", "/charts/US", "/charts/GB"}
			for _, k := range hot {
				s.put(k, body())
			}
			for i := range 20000 {
				s.put(fmt.Sprintf("/search?q=%d", i), body())
				if i%100 == 0 {
					for _, k := range hot {
						if s.get(k) == nil {
							t.Fatalf("after %d URLs asked for once, %s (asked for every hundred) was dropped", i, k)
						}
					}
				}
				if n, size := s.held(); n > b.Answers || size > b.Bytes {
					t.Fatalf("after %d URLs: %d answers, %d bytes; bound %d, %d", i, n, size, b.Answers, b.Bytes)
				}
			}
		})
	}
}

// TestHotAnswerBuiltAgainStaysProtected: a page readers keep asking for,
// built again (its new copy put in place of the old), keeps its place
// among the protected, so that a flood of URLs asked for once, between
// its build and its next reader, never pushes it out.
func TestHotAnswerBuiltAgainStaysProtected(t *testing.T) {
	t.Parallel()
	s := newKeptSet(KeptBound{Bytes: 1 << 20, Answers: 64})
	body := func() *answer { return &answer{body: make([]byte, 1000)} }
	s.put("/worldwide", body())
	s.get("/worldwide")
	for round := range 50 {
		s.put("/worldwide", body()) // built again beside the requests
		for i := range 200 {
			s.put(fmt.Sprintf("/search?q=%d-%d", round, i), body())
		}
		if s.get("/worldwide") == nil {
			t.Fatalf("round %d: the page built again was pushed out by 200 URLs asked for once", round)
		}
	}
	if n, size := s.held(); n > 64 || size > 1<<20 {
		t.Errorf("%d answers, %d bytes; bound 64, %d", n, size, 1<<20)
	}
}

// TestFloodOfUniqueURLsStaysBounded: thousands of unique URLs, 404s
// and searches that answer 200, leave the kept answers within their bound,
// keep no 404 at all, and never push out the chart readers keep asking
// for (it is built once in all).
func TestFloodOfUniqueURLsStaysBounded(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 21, 9, 0, 10, 0, time.UTC)
	s, _, _ := cachedServer(t, &now)
	s.answers.set = newKeptSet(KeptBound{Bytes: 2 << 20, Answers: 256})
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
	if n, size := s.answers.set.held(); n != 1 {
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
	if n, size := s.answers.set.held(); n > 256 || size > 2<<20 {
		t.Errorf("after 2000 unique searches: %d answers, %d bytes kept; bound 256, %d", n, size, 2<<20)
	}
	if n := len(s.answers.building); n != 0 {
		t.Errorf("%d builds left under way", n)
	}
	if _, ok := s.answers.set.byKey["/charts/US"]; !ok {
		t.Errorf("the chart asked for every twenty requests is no longer kept")
	}
}

// TestWatcherRebuildsHotPagesAndFewAskedOnce: at a change of the mark the
// watcher builds again every page asked for twice or more, and of the
// pages asked for once only the latest few, so that a flood of unique
// searches never sets it to rebuild them all.
func TestWatcherRebuildsHotPagesAndFewAskedOnce(t *testing.T) {
	t.Parallel()
	s := newKeptSet(KeptBound{Bytes: 1 << 30, Answers: 10000})
	req := httptest.NewRequest(http.MethodGet, "/", nil)
	served := func() *answer {
		a := &answer{mark: "old", body: make([]byte, 100), req: req}
		a.asked.Store(true)
		return a
	}
	hot := []string{"/", "/charts/US", "/worldwide"}
	for _, k := range hot {
		s.put(k, served())
		s.get(k)
	}
	for i := range 500 {
		s.put(fmt.Sprintf("/search?q=%d", i), served())
	}
	got := map[string]bool{}
	for _, k := range s.stale("new") {
		got[k.key] = true
	}
	for _, k := range hot {
		if !got[k] {
			t.Errorf("%s, asked for twice, is not built again at the new mark", k)
		}
	}
	if once := len(got) - len(hot); once != staleOnce || !got["/search?q=499"] || got["/search?q=0"] {
		t.Errorf("pages asked for once built again: %d (the latest among them %v, the oldest %v), want the %d latest",
			once, got["/search?q=499"], got["/search?q=0"], staleOnce)
	}
}

package kept

import (
	"fmt"
	"testing"
)

// page is an answer as the set sees it.
type page struct {
	mark   string
	size   int
	served bool
}

func (p *page) Size() int    { return p.size }
func (p *page) Mark() string { return p.mark }
func (p *page) Served() bool { return p.served }

// TestKeptSetKeepsHotAnswers: past its bound the set drops answers asked
// for once, never one asked for again and again, and holds no more than
// its bound in bytes and in answers.
func TestKeptSetKeepsHotAnswers(t *testing.T) {
	t.Parallel()
	for _, b := range []Bound{{Bytes: 1 << 20, Answers: 64}, {Bytes: 40 << 10, Answers: 1000}} {
		t.Run(fmt.Sprintf("%d bytes, %d answers", b.Bytes, b.Answers), func(t *testing.T) {
			t.Parallel()
			s := NewSet[*page](b)
			body := func() *page { return &page{size: 1000} }
			hot := []string{"/", "/charts/US", "/charts/GB"}
			for _, k := range hot {
				s.Put(k, body())
			}
			for i := range 20000 {
				s.Put(fmt.Sprintf("/search?q=%d", i), body())
				if i%100 == 0 {
					for _, k := range hot {
						if s.Get(k) == nil {
							t.Fatalf("after %d URLs asked for once, %s (asked for every hundred) was dropped", i, k)
						}
					}
				}
				if n, size := s.Held(); n > b.Answers || size > b.Bytes {
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
	s := NewSet[*page](Bound{Bytes: 1 << 20, Answers: 64})
	body := func() *page { return &page{size: 1000} }
	s.Put("/worldwide", body())
	s.Get("/worldwide")
	for round := range 50 {
		s.Put("/worldwide", body()) // built again beside the requests
		for i := range 200 {
			s.Put(fmt.Sprintf("/search?q=%d-%d", round, i), body())
		}
		if s.Get("/worldwide") == nil {
			t.Fatalf("round %d: the page built again was pushed out by 200 URLs asked for once", round)
		}
	}
	if n, size := s.Held(); n > 64 || size > 1<<20 {
		t.Errorf("%d answers, %d bytes; bound 64, %d", n, size, 1<<20)
	}
}

// TestWatcherRebuildsHotPagesAndFewAskedOnce: at a change of the mark the
// watcher builds again every page asked for twice or more, and of the
// pages asked for once only the latest few, so that a flood of unique
// searches never sets it to rebuild them all.
func TestWatcherRebuildsHotPagesAndFewAskedOnce(t *testing.T) {
	t.Parallel()
	s := NewSet[*page](Bound{Bytes: 1 << 30, Answers: 10000})
	served := func() *page { return &page{mark: "old", size: 100, served: true} }
	hot := []string{"/", "/charts/US", "/worldwide"}
	for _, k := range hot {
		s.Put(k, served())
		s.Get(k)
	}
	for i := range 500 {
		s.Put(fmt.Sprintf("/search?q=%d", i), served())
	}
	got := map[string]bool{}
	for _, k := range s.Stale("new") {
		got[k.Key] = true
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

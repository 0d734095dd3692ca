package web

import (
	"strings"
	"testing"
	"time"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/internal/rig/storetest"
)

// TestPagesSayItRight: a region English names with "the" is said so;
// the worldwide page's runs of one minute are "at" it, not "between" it
// and itself; the front page's preview title is its title, which follows
// the region it leads with; a region with one chart offers no category
// picker of one choice beside its region's.
func TestPagesSayItRight(t *testing.T) {
	t.Parallel()
	db := storetest.Open(t)
	t0 := time.Date(2026, 11, 27, 10, 47, 5, 0, time.UTC)
	regionRun(t, db, "US", "", t0, ingest.Video{ID: "us", Title: "US video"})
	regionRun(t, db, "SA", "", t0.Add(40*time.Second), ingest.Video{ID: "sa", Title: "أخبار اليوم"})
	srv := linkServer(t, db, t0.Add(time.Hour))

	front := string(fetch(t, srv.URL+"/?region=US"))
	for _, want := range []string{`<title>Trending in the United States · ingest`, `<meta property="og:title" content="Trending in the United States">`} {
		if !strings.Contains(front, want) {
			t.Errorf("front page: no %s", want)
		}
	}
	if f := feedOf(t, srv.URL+"/charts/US/feed"); f.Title != "Trending in the United States" {
		t.Errorf("the US feed is %q, want Trending in the United States", f.Title)
	}
	world := string(fetch(t, srv.URL+"/worldwide"))
	if strings.Contains(world, "between") || !strings.Contains(world, `as YouTube gave them at <time datetime="`) {
		t.Errorf("worldwide page, two runs in one minute: want them said at it, not between it and itself:\n%s", between(world, `class="muted meta"`, "</p>"))
	}
	chart := string(fetch(t, srv.URL+"/charts/SA"))
	if strings.Contains(chart, `name="category"`) {
		t.Errorf("a region of one chart offers a category picker of one choice")
	}
	if h := headOf(chart); !strings.Contains(strings.Join(h["og:description"], ""), "in Saudi Arabia,") {
		t.Errorf("SA chart's description %q", h["og:description"])
	}
}

// between is the text of s from its first from to the to after it.
func between(s, from, to string) string {
	i := strings.Index(s, from)
	if i < 0 {
		return ""
	}
	j := strings.Index(s[i:], to)
	if j < 0 {
		return s[i:]
	}
	return s[i : i+j]
}

package web

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/store"
)

// chartServer serves three daily runs of the US chart, and one of its
// music chart: a is #1, then #2, then #2; b is #2, then #1, then gone; c
// is new in the second run and #1 in the third.
func chartServer(t *testing.T, cfg Config) (*httptest.Server, time.Time) {
	t.Helper()
	db, err := store.Open(context.Background(), filepath.Join(t.TempDir(), "ingest.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	t0 := time.Date(2026, 11, 20, 9, 0, 30, 0, time.UTC)
	a := ingest.Video{ID: "vid-a", Title: "Alpha", CategoryID: "10", Thumbnail: "https://i.ytimg.com/vi/vid-a/default.jpg"}
	b := ingest.Video{ID: "vid-b", Title: "Beta", CategoryID: "24", Thumbnail: "https://evil.example/b.jpg"}
	c := ingest.Video{ID: "vid-c", Title: "Gamma", CategoryID: "24"}
	chartRun(t, db, "", t0, a, b)
	chartRun(t, db, "", t0.Add(24*time.Hour), b, a, c)
	chartRun(t, db, "", t0.Add(48*time.Hour), c, a)
	chartRun(t, db, "10", t0.Add(48*time.Hour+time.Minute), a)
	cfg.DB, cfg.Listen = db, "127.0.0.1:0"
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	return srv, t0
}

func row(t *testing.T, page, id string) string {
	t.Helper()
	i := strings.Index(page, `href="/videos/`+id+`"`)
	if i < 0 {
		t.Fatalf("no row of %s in\n%s", id, page)
	}
	start := strings.LastIndex(page[:i], "<tr>")
	end := strings.Index(page[i:], "</tr>")
	return page[start : i+end]
}

// TestChartPageReadsLikeAChart: rank, movement, "new", peak rank, days on
// chart, thumbnails from the one image host the policy allows, links to
// the video and to YouTube, the run before and after, switchers and a
// date-time picker.
func TestChartPageReadsLikeAChart(t *testing.T) {
	t.Parallel()
	srv, t0 := chartServer(t, Config{Derived: true})
	// The picker's value, to the minute, finds the run started in it.
	middle := string(fetch(t, srv.URL+"/charts/US?at=2026-11-21T09:00"))
	if !strings.Contains(middle, `<input id="at" type="datetime-local" name="at" value="2026-11-21T09:00" step="60">`) {
		t.Errorf("the picker does not show the run's time:\n%s", middle)
	}
	a := row(t, middle, "vid-a")
	for _, want := range []string{`<td class="n rank">2</td>`, `▼1`, `<td class="n peak">#1</td>`, `<td class="n days">2</td>`,
		`<img src="https://i.ytimg.com/vi/vid-a/default.jpg" alt="" width="80" height="60" loading="lazy"`,
		`href="https://www.youtube.com/watch?v=vid-a"`} {
		if !strings.Contains(a, want) {
			t.Errorf("row of a in the middle run: no %q in\n%s", want, a)
		}
	}
	if !strings.Contains(a, `<td class="move day"><span class="down" title="down 1 since a day before">▼1</span></td>`) {
		t.Errorf("row of a in the middle run: no fall of 1 since a day before in\n%s", a)
	}
	if c := row(t, middle, "vid-c"); !strings.Contains(c, `<span class="new">new</span>`) || !strings.Contains(c, `<td class="n days">1</td>`) ||
		!strings.Contains(c, `title="not in the chart a day before">–</span>`) {
		t.Errorf("c, new in the middle run: no new mark or 1 day in\n%s", c)
	}
	if b := row(t, middle, "vid-b"); strings.Contains(b, "evil.example") || strings.Contains(b, "<img") {
		t.Errorf("a thumbnail from another host was shown:\n%s", b)
	}
	prev := "/charts/US?at=" + strings.ReplaceAll(t0.Format(time.RFC3339Nano), ":", "%3A")
	next := "/charts/US?at=" + strings.ReplaceAll(t0.Add(48*time.Hour).Format(time.RFC3339Nano), ":", "%3A")
	if !strings.Contains(middle, `href="`+prev+`">← Previous run`) || !strings.Contains(middle, `href="`+next+`">Next run →`) {
		t.Errorf("middle run: no links to the runs before (%s) and after (%s)", prev, next)
	}
	latest := string(fetch(t, srv.URL+next))
	if !strings.Contains(latest, "Latest run") || strings.Contains(latest, "Next run") || !strings.Contains(row(t, latest, "vid-c"), `title="up 2 since a day before">▲2`) {
		t.Errorf("the next run's page is not the latest run with c climbing")
	}
	if !strings.Contains(latest, `<a href="/charts/US" aria-current="page">all</a>`) || !strings.Contains(latest, `<a href="/charts/US?category=10">music</a>`) ||
		!strings.Contains(latest, `<a href="/charts/US" aria-current="page">US</a>`) {
		t.Errorf("no region and category switchers in\n%s", latest)
	}
	res, err := http.Get(srv.URL + "/charts/US")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if csp := res.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "img-src 'self' data: https://i.ytimg.com;") || strings.Contains(csp, "script-src") {
		t.Errorf("policy %q: want images from i.ytimg.com alone besides this server, and no script", csp)
	}
}

// TestNoThumbnails: --no-thumbnails loads nothing from YouTube's image
// host, and the policy no longer allows it.
func TestNoThumbnails(t *testing.T) {
	t.Parallel()
	srv, _ := chartServer(t, Config{NoThumbnails: true})
	res, err := http.Get(srv.URL + "/charts/US")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	page := string(fetch(t, srv.URL+"/charts/US"))
	if strings.Contains(page, "<img") || strings.Contains(res.Header.Get("Content-Security-Policy"), "ytimg") {
		t.Errorf("with NoThumbnails: an image or the image host in the policy %q", res.Header.Get("Content-Security-Policy"))
	}
}

// TestChartComputedFiguresFollowTheStanding: without --derived, the
// chart's page and answer carry only what the upstream gave, with the time
// it gave it; with it, the computed figures come labelled as computed.
func TestChartComputedFiguresFollowTheStanding(t *testing.T) {
	t.Parallel()
	for _, derived := range []bool{false, true} {
		srv, _ := chartServer(t, Config{Derived: derived})
		page := string(fetch(t, srv.URL+"/charts/US"))
		for s, want := range map[string]bool{
			"Views as YouTube gave them at":   true,
			"computed by ingest":              derived,
			`<th class="n peak" scope="col">`: derived,
			"▲":                               derived,
		} {
			if strings.Contains(page, s) != want {
				t.Errorf("derived %v: page has %q: %v, want %v", derived, s, !want, want)
			}
		}
		var raw struct {
			Derived  bool             `json:"derived"`
			Computed []string         `json:"computed"`
			Entries  []map[string]any `json:"entries"`
		}
		if err := json.Unmarshal(fetch(t, srv.URL+"/api/v1/charts/US"), &raw); err != nil {
			t.Fatal(err)
		}
		if raw.Derived != derived || len(raw.Computed) == 0 || len(raw.Entries) == 0 {
			t.Fatalf("derived %v: answer says derived %v, computed %v, %d entries", derived, raw.Derived, raw.Computed, len(raw.Entries))
		}
		e := raw.Entries[0]
		if e["views_at"] == nil {
			t.Errorf("derived %v: an entry's views carry no time: %v", derived, e)
		}
		for _, f := range raw.Computed {
			if _, ok := e[f]; !ok || (e[f] == nil) == derived {
				t.Errorf("derived %v: entry field %s = %v", derived, f, e[f])
			}
		}
	}
}

package web

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/clock"
	"github.com/ingestworks/ingest/internal/rig/storetest"
)

// chartServer serves three daily runs of the US chart, and one of its
// music chart: a is #1, then #2, then #2; b is #2, then #1, then gone; c
// is new in the second run and #1 in the third.
func chartServer(t *testing.T, cfg Config) (*httptest.Server, time.Time) {
	t.Helper()
	db := storetest.Open(t)
	t0 := time.Date(2026, 11, 20, 9, 0, 30, 0, time.UTC)
	a := ingest.Video{ID: "vid-a", Title: "Alpha", CategoryID: "10", Thumbnail: "https://i.ytimg.com/vi/vid-a/default.jpg"}
	b := ingest.Video{ID: "vid-b", Title: "Beta", CategoryID: "24", Thumbnail: "https://evil.example/b.jpg"}
	c := ingest.Video{ID: "vid-c", Title: "Gamma", CategoryID: "24"}
	a.ChannelID, a.ChannelTitle, a.PublishedAt = "UCalpha", "Alpha's channel", t0.Add(-3*24*time.Hour)
	views := func(v ingest.Video, n int64) ingest.Video { v.ViewCount = &n; return v }
	chartRun(t, db, "", t0, views(a, 1000), views(b, 500))
	chartRun(t, db, "", t0.Add(24*time.Hour), views(b, 900), views(a, 1500), views(c, 100))
	chartRun(t, db, "", t0.Add(48*time.Hour), views(c, 400), views(a, 2_601_000))
	chartRun(t, db, "10", t0.Add(48*time.Hour+time.Minute), a)
	cfg.DB, cfg.Listen = db, "127.0.0.1:0"
	if cfg.Clock == nil {
		cfg.Clock = clock.System
	}
	if cfg.Public && cfg.Meter == nil {
		cfg.Meter = anyMeter()
	}
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
	start := strings.LastIndex(page[:i], "<tr")
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
	for _, want := range []string{`<td class="n rank"><span class="r">2</span><span class="mv down" title="down 1 since the previous run (computed by ingest)">▼1</span></td>`,
		`<td class="n peak">#1</td>`, `<td class="n days">2</td>`, `<td class="n views" title="1,500 views at Nov 21 09:00 UTC">1.5K views</td>`,
		`<td class="n gained"><span title="500 views since the previous run, computed by ingest">&#43;500</span></td>`,
		`<td class="n gained24"><span title="500 views in 24 hours, computed by ingest">&#43;500</span></td>`,
		`<a class="channel" href="https://www.youtube.com/channel/UCalpha" rel="noopener noreferrer" lang="en" dir="auto">Alpha&#39;s channel</a>`,
		`<img src="https://i.ytimg.com/vi/vid-a/mqdefault.jpg" alt="" width="320" height="180" loading="lazy"`,
		`href="https://www.youtube.com/watch?v=vid-a"`} {
		if !strings.Contains(a, want) {
			t.Errorf("row of a in the middle run: no %q in\n%s", want, a)
		}
	}
	if !strings.Contains(a, `<td class="move day"><span class="down" title="down 1 since a day before">▼1</span></td>`) {
		t.Errorf("row of a in the middle run: no fall of 1 since a day before in\n%s", a)
	}
	if c := row(t, middle, "vid-c"); !strings.Contains(c, `<span class="mv new" title="new since the previous run (computed by ingest)">new</span>`) || !strings.Contains(c, `<td class="n days">1</td>`) ||
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
	if !strings.Contains(latest, `<option value="all" selected>all</option><option value="10">music</option>`) ||
		!strings.Contains(latest, `<option value="US" selected>United States (US)</option>`) {
		t.Errorf("no region and category pickers in\n%s", latest)
	}
	// Sorted by views gained since the run before: a (+2.6M) above c (+300).
	byGain := string(fetch(t, srv.URL+"/charts/US?sort=gained"))
	if strings.Index(byGain, `href="/videos/vid-a"`) > strings.Index(byGain, `href="/videos/vid-c"`) ||
		!strings.Contains(byGain, `<th class="n gained" scope="col" aria-sort="descending">`) {
		t.Errorf("sorted by views gained: want a above c, the column marked sorted")
	}
	for _, q := range []string{"/charts?region=us&category=music", "/charts?region=US&category=gaming"} {
		res, _ := get(t, srv.URL+q)
		if want := map[bool]string{true: "/charts/US?category=10", false: "/charts/US"}[strings.Contains(q, "music")]; res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != want {
			t.Errorf("the picker's %s: %d to %q, want 303 to %s", q, res.StatusCode, res.Header.Get("Location"), want)
		}
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
			`<th class="n gained"`:            derived,
			"?sort=gained":                    derived,
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
		if res, _ := get(t, srv.URL+"/charts/US?sort=gained"); (res.StatusCode == 200) != derived {
			t.Errorf("derived %v: sorted by a computed figure: %d", derived, res.StatusCode)
		}
	}
}

// A run is found again by the time printed for it, to the second, though
// it started within that second: the API's at= and the page's ?at=, and
// the time of the run after it finds that run, not the one before.
func TestChartAtThePrintedSecond(t *testing.T) {
	t.Parallel()
	db := storetest.Open(t)
	first := time.Date(2026, 11, 28, 22, 18, 7, 610*int(time.Millisecond), time.UTC)
	second := first.Add(22*time.Second + 300*time.Millisecond) // 22:18:29.910
	regionRun(t, db, "DE", "", first, ingest.Video{ID: "vid-a", Title: "Alpha"})
	regionRun(t, db, "DE", "", second, ingest.Video{ID: "vid-b", Title: "Beta"})
	s, err := New(Config{DB: db, Listen: "127.0.0.1:0", Clock: clock.System})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	for _, run := range []time.Time{first, second} {
		printed := run.Format(time.RFC3339)
		var c ChartJSON
		if err := json.Unmarshal(fetch(t, srv.URL+"/api/v1/charts/DE?at="+printed), &c); err != nil {
			t.Fatal(err)
		}
		if c.At == nil || *c.At != printed {
			t.Errorf("at=%s answers the run stamped %v, want %s", printed, c.At, printed)
		}
		if page := string(fetch(t, srv.URL+"/charts/DE?at="+printed)); !strings.Contains(page, map[time.Time]string{first: "Alpha", second: "Beta"}[run]) {
			t.Errorf("the page at ?at=%s does not show its run", printed)
		}
	}
}

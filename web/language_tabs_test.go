package web

import (
	"encoding/json"
	"html"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/clock"
	"github.com/ingestworks/ingest/internal/rig/storetest"
)

// langVideo is a video with the upstream's audio and text language tags.
func langVideo(id, audio, text string) ingest.Video {
	return ingest.Video{ID: id, Title: "Video " + id, CategoryID: "10", AudioLanguage: audio, Language: text}
}

// languageServer serves three daily runs of the US chart and one of its
// music chart. The first run has three videos in hi (a, c by its audio's
// hi-IN, f by its text), two in en and one in ta, and d with no words
// (zxx) but an English title on the US chart, so three in en; the
// second has a and c in hi, b in en and h in fr; the third b, a, c.
func languageServer(t *testing.T) (*httptest.Server, time.Time) {
	t.Helper()
	db := storetest.Open(t)
	t0 := time.Date(2026, 11, 20, 9, 0, 30, 0, time.UTC)
	a, b, c := langVideo("a", "hi", ""), langVideo("b", "en", "en"), langVideo("c", "hi-IN", "en")
	d, e, f := langVideo("d", "zxx", ""), langVideo("e", "", "ta"), langVideo("f", "", "hi")
	g, h := langVideo("g", "en-GB", ""), langVideo("h", "fr", "")
	chartRun(t, db, "", t0, a, b, c, d, e, f, g)
	chartRun(t, db, "", t0.Add(24*time.Hour), a, b, h, c)
	chartRun(t, db, "", t0.Add(48*time.Hour), b, a, c)
	chartRun(t, db, "10", t0.Add(48*time.Hour+time.Minute), a, b)
	s, err := New(Config{Clock: clock.System, DB: db, Listen: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	return srv, t0
}

var tabLink = regexp.MustCompile(`<a href="([^"]*)"(?: title="[^"]*")?( aria-current="page")?>([^<]*)(?: <span class="count">(\d+)</span>)?</a>`)

// readTabs reads a chart page's language switcher: each tab as its
// label, then its link, then * when it is the current one.
func readTabs(t *testing.T, page string) []string {
	t.Helper()
	start := strings.Index(page, `<nav class="switch langs" aria-label="Languages">`)
	if start < 0 {
		t.Fatalf("no language switcher in\n%s", page)
	}
	nav := page[start : start+strings.Index(page[start:], "</nav>")]
	var tabs []string
	for _, m := range tabLink.FindAllStringSubmatch(nav, -1) {
		tab := m[3]
		if m[4] != "" {
			tab += " (" + m[4] + ")"
		}
		tab += " " + html.UnescapeString(m[1])
		if m[2] != "" {
			tab += " *"
		}
		tabs = append(tabs, tab)
	}
	return tabs
}

func sameTabs(t *testing.T, where string, got, want []string) {
	t.Helper()
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("%s: language tabs\n%s\nwant\n%s", where, strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestChartPageLanguageTabs: the chart page offers All and the languages
// of the run it shows, most videos first, each at the same run; a tab
// keeps the chart to that language, the steps between
// runs and the time picker keep it, and a bad one is the API's 400.
func TestChartPageLanguageTabs(t *testing.T) {
	t.Parallel()
	srv, t0 := languageServer(t)
	at := func(d time.Duration) string { return url.QueryEscape(t0.Add(d).Format(time.RFC3339Nano)) }
	first := at(0)
	sameTabs(t, "first run", readTabs(t, string(fetch(t, srv.URL+"/charts/US?at=2026-11-20T09:00"))), []string{
		"All /charts/US?at=" + first + " *", "English (3) /charts/US?at=" + first + "&language=en",
		"Hindi · हिन्दी (3) /charts/US?at=" + first + "&language=hi", "Tamil · தமிழ் (1) /charts/US?at=" + first + "&language=ta",
	})

	middle := string(fetch(t, srv.URL+"/charts/US?at=2026-11-21T09:00&language=hi"))
	second := at(24 * time.Hour)
	sameTabs(t, "middle run in hi", readTabs(t, middle), []string{
		"All /charts/US?at=" + second, "Hindi · हिन्दी (2) /charts/US?at=" + second + "&language=hi *",
		"English (1) /charts/US?at=" + second + "&language=en", "French · français (1) /charts/US?at=" + second + "&language=fr",
	})
	if got := regexp.MustCompile(`<td class="n rank"><span class="r">(\d+)</span></td>`).FindAllStringSubmatch(middle, -1); len(got) != 2 || got[0][1] != "1" || got[1][1] != "4" ||
		!strings.Contains(row(t, middle, "a"), `<td class="n rank"><span class="r">1</span></td>`) || !strings.Contains(row(t, middle, "c"), `<td class="n rank"><span class="r">4</span></td>`) {
		t.Errorf("middle run in hi: want a at 1 and c at 4 alone, got ranks %v", got)
	}
	prev := html.EscapeString("/charts/US?at=" + first + "&language=hi")
	next := html.EscapeString("/charts/US?at=" + at(48*time.Hour) + "&language=hi")
	for _, want := range []string{`href="` + prev + `">← Previous run`, `href="` + next + `">Next run →`,
		`<a class="latest" href="/charts/US?language=hi">Latest</a>`, `<input type="hidden" name="language" value="hi">`,
		`<h1><span title="region US">United States</span> trending chart · Hindi · हिन्दी</h1>`} {
		if !strings.Contains(middle, want) {
			t.Errorf("middle run in hi: no %s", want)
		}
	}

	// The latest run's tabs stay on the latest; a language it has none
	// of is a tab of its own, over an empty chart.
	sameTabs(t, "latest in fr", readTabs(t, string(fetch(t, srv.URL+"/charts/US?language=FR"))), []string{
		"All /charts/US", "Hindi · हिन्दी (2) /charts/US?language=hi", "English (1) /charts/US?language=en", "French · français /charts/US?language=fr *",
	})
	if latest := string(fetch(t, srv.URL+"/charts/US?language=fr")); !strings.Contains(latest, "No video of this run is in French · français.") {
		t.Errorf("latest in fr: no word that the run has no video in fr")
	}
	sameTabs(t, "music", readTabs(t, string(fetch(t, srv.URL+"/charts/US?category=10"))), []string{
		"All /charts/US?category=10 *", "English (1) /charts/US?category=10&language=en", "Hindi · हिन्दी (1) /charts/US?category=10&language=hi",
	})

	var api errorBody
	if err := json.Unmarshal(fetchStatus(t, srv.URL+"/api/v1/charts/US?language=h_", http.StatusBadRequest), &api); err != nil {
		t.Fatal(err)
	}
	page := string(fetchStatus(t, srv.URL+"/charts/US?language=h_", http.StatusBadRequest))
	if api.Error.Parameter != "language" || !strings.Contains(page, html.EscapeString(api.Error.Message)) {
		t.Errorf("a bad language: the page does not say what the API does (%+v):\n%s", api.Error, page)
	}
}

// fetchStatus gets url, which must answer status.
func fetchStatus(t *testing.T, url string, status int) []byte {
	t.Helper()
	res, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	if res.StatusCode != status {
		t.Fatalf("GET %s: %d, want %d\n%s", url, res.StatusCode, status, b)
	}
	return b
}

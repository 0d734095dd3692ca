package web

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"testing"
	"time"

	"github.com/mmcdole/gofeed/atom"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/clock"
	"github.com/ingestworks/ingest/internal/rig/storetest"
	"github.com/ingestworks/ingest/store"
)

// linkServer is a server at https://charts.example.org/ over db, on a
// clock reading now.
func linkServer(t *testing.T, db *store.DB, now time.Time) *httptest.Server {
	t.Helper()
	pub, _ := url.Parse("https://charts.example.org/")
	s, err := New(Config{DB: db, Listen: "127.0.0.1:0", PublicURL: pub, Clock: clock.Func(func() time.Time { return now })})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	return srv
}

// TestLinksSayWhatTheyShow: a page of an earlier run names itself, at the
// run's own time, as its canonical address and og:url, and its title says
// when, so that a link to it previews as that run; its other orders name
// it too; the latest chart's orders name the chart.
func TestLinksSayWhatTheyShow(t *testing.T) {
	t.Parallel()
	db := storetest.Open(t)
	t0 := time.Date(2026, 11, 20, 9, 0, 30, 0, time.UTC)
	regionRun(t, db, "JP", "", t0, ingest.Video{ID: "old", Title: "Old"})
	regionRun(t, db, "JP", "", t0.Add(time.Hour), ingest.Video{ID: "new", Title: "New"})
	srv := linkServer(t, db, t0.Add(2*time.Hour))
	permalink := "https://charts.example.org/charts/JP?at=" + url.QueryEscape(t0.Format(time.RFC3339Nano))
	for path, want := range map[string]string{
		"/charts/JP?at=2026-11-20T09:00":            permalink,
		"/charts/JP?at=2026-11-20T09:00&sort=views": permalink,
		"/charts/JP":            "https://charts.example.org/charts/JP",
		"/charts/JP?sort=views": "https://charts.example.org/charts/JP",
	} {
		h := headOf(string(fetch(t, srv.URL+path)))
		if !slices.Equal(h["canonical"], []string{want}) || !slices.Equal(h["og:url"], []string{want}) {
			t.Errorf("%s: canonical %q, og:url %q; want %s", path, h["canonical"], h["og:url"], want)
		}
	}
	if h := headOf(string(fetch(t, srv.URL+"/charts/JP?at=2026-11-20T09:00"))); !slices.Equal(h["og:title"], []string{"Japan chart at Nov 20 09:00 UTC"}) {
		t.Errorf("an earlier run previews as %q, want it to say its time", h["og:title"])
	}
}

// TestFeedsSayTheirOwn: the worldwide feed of another length is another
// feed, with its own id and self link; a feed's Last-Modified is its
// <updated>, the same from a server started later, which answers a
// client's If-Modified-Since with 304.
func TestFeedsSayTheirOwn(t *testing.T) {
	t.Parallel()
	db := storetest.Open(t)
	t0 := time.Date(2026, 11, 20, 9, 0, 0, 0, time.UTC)
	regionRun(t, db, "US", "", t0, worldVideos(t0, "a", "b")...)
	first := linkServer(t, db, t0.Add(time.Hour))
	whole, ten := feedOf(t, first.URL+"/worldwide/feed"), feedOf(t, first.URL+"/worldwide/feed?limit=10")
	if whole.ID == ten.ID || selfOf(whole) == selfOf(ten) || selfOf(ten) != "https://charts.example.org/worldwide/feed?limit=10" {
		t.Errorf("the feed of 50 and of 10: ids %s and %s, self %s and %s; want each its own", whole.ID, ten.ID, selfOf(whole), selfOf(ten))
	}
	if fifty := feedOf(t, first.URL+"/worldwide/feed?limit=50"); fifty.ID != whole.ID {
		t.Errorf("the feed asked for its own length is another: %s, want %s", fifty.ID, whole.ID)
	}
	later := linkServer(t, db, t0.Add(30*time.Hour)) // a restart, a day on
	for _, path := range []string{"/charts/US/feed", "/worldwide/feed", "/sitemap.xml"} {
		a, b := lastModified(t, first.URL+path, ""), lastModified(t, later.URL+path, "")
		if a != b || a == "" {
			t.Errorf("%s: Last-Modified %q, then from a server started later %q; want the content's time from both", path, a, b)
		}
		if path != "/sitemap.xml" {
			f := feedOf(t, later.URL+path)
			if u, _ := time.Parse(time.RFC3339, f.Updated); u.UTC().Format(http.TimeFormat) != a {
				t.Errorf("%s: Last-Modified %s, <updated> %s; want the same time", path, a, f.Updated)
			}
		}
		if code := lastModifiedStatus(t, later.URL+path, a); code != http.StatusNotModified {
			t.Errorf("%s: If-Modified-Since its own Last-Modified, from a server started later: %d, want 304", path, code)
		}
	}
}

func selfOf(f *atom.Feed) string {
	for _, l := range f.Links {
		if l.Rel == "self" {
			return l.Href
		}
	}
	return ""
}

func lastModified(t *testing.T, u, since string) string {
	t.Helper()
	res := getSince(t, u, since)
	return res.Header.Get("Last-Modified")
}

func lastModifiedStatus(t *testing.T, u, since string) int {
	t.Helper()
	return getSince(t, u, since).StatusCode
}

func getSince(t *testing.T, u, since string) *http.Response {
	t.Helper()
	req, _ := http.NewRequest("GET", u, nil)
	if since != "" {
		req.Header.Set("If-Modified-Since", since)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	return res
}

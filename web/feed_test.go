package web

import (
	"bytes"
	"encoding/xml"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mmcdole/gofeed"
	"github.com/mmcdole/gofeed/atom"

	"github.com/ingestworks/ingest/clock"
	"github.com/ingestworks/ingest/internal/rig/storetest"
)

// atomNS is the Atom namespace (RFC 4287, section 2).
const atomNS = "http://www.w3.org/2005/Atom"

// xmlNode is an element as the RFC check reads it: its name, attributes,
// text and children.
type xmlNode struct {
	XMLName  xml.Name
	Attrs    []xml.Attr `xml:",any,attr"`
	Text     string     `xml:",chardata"`
	Children []xmlNode  `xml:",any"`
}

func (n xmlNode) all(local string) []xmlNode {
	var out []xmlNode
	for _, c := range n.Children {
		if c.XMLName.Space == atomNS && c.XMLName.Local == local {
			out = append(out, c)
		}
	}
	return out
}

func (n xmlNode) attr(name string) string {
	for _, a := range n.Attrs {
		if a.Name.Local == name && a.Name.Space == "" {
			return a.Value
		}
	}
	return ""
}

// rfc4287 lists what b breaks of RFC 4287's rules for a feed document:
// the root atom:feed; exactly one atom:id (an absolute IRI), atom:title
// and atom:updated (a date-time, section 3.3) in the feed and in each
// entry; an atom:author in the feed or in every entry (4.1.1); an entry
// without atom:content has a link rel="alternate" (4.1.1.2); at most one
// alternate link per type (4.1.1); a link has an href (4.2.7.1); a text
// construct's type is text, html or xhtml (3.1.1). It also asks what the
// RFC says a feed should have: a link rel="self", and ids unique.
func rfc4287(b []byte) []string {
	var root xmlNode
	if err := xml.Unmarshal(b, &root); err != nil {
		return []string{"not XML: " + err.Error()}
	}
	var bad []string
	if root.XMLName.Space != atomNS || root.XMLName.Local != "feed" {
		return []string{"the root is " + root.XMLName.Space + " " + root.XMLName.Local + ", not atom:feed"}
	}
	one := func(where string, n xmlNode, local string) {
		els := n.all(local)
		if len(els) != 1 {
			bad = append(bad, where+": "+strconv.Itoa(len(els))+" atom:"+local+", want exactly one")
			return
		}
		v := strings.TrimSpace(els[0].Text)
		switch local {
		case "id":
			if u, err := url.Parse(v); err != nil || u.Scheme == "" {
				bad = append(bad, where+": atom:id "+v+" is not an absolute IRI")
			}
		case "updated":
			if _, err := time.Parse(time.RFC3339, v); err != nil {
				bad = append(bad, where+": atom:updated "+v+" is not a date-time")
			}
		case "title":
			if t := els[0].attr("type"); t != "" && t != "text" && t != "html" && t != "xhtml" {
				bad = append(bad, where+": atom:title type "+t)
			}
		}
	}
	links := func(where string, n xmlNode) {
		types := map[string]int{}
		for _, l := range n.all("link") {
			if l.attr("href") == "" {
				bad = append(bad, where+": a link without href")
			}
			if rel := l.attr("rel"); rel == "" || rel == "alternate" {
				types[l.attr("type")+"|"+l.attr("hreflang")]++
			}
		}
		for k, n := range types {
			if n > 1 {
				bad = append(bad, where+": "+strconv.Itoa(n)+" alternate links of type "+k)
			}
		}
	}
	for _, local := range []string{"id", "title", "updated"} {
		one("feed", root, local)
	}
	links("feed", root)
	if !slices.ContainsFunc(root.all("link"), func(l xmlNode) bool { return l.attr("rel") == "self" }) {
		bad = append(bad, "feed: no link rel=self")
	}
	feedAuthor := len(root.all("author")) > 0
	ids := map[string]bool{}
	for i, e := range root.all("entry") {
		where := "entry " + strconv.Itoa(i+1)
		for _, local := range []string{"id", "title", "updated"} {
			one(where, e, local)
		}
		links(where, e)
		if !feedAuthor && len(e.all("author")) == 0 {
			bad = append(bad, where+": no atom:author, and the feed has none")
		}
		for _, a := range append(e.all("author"), root.all("author")...) {
			if len(a.all("name")) != 1 {
				bad = append(bad, where+": an author without exactly one atom:name")
			}
		}
		if len(e.all("content")) == 0 && !slices.ContainsFunc(e.all("link"), func(l xmlNode) bool { return l.attr("rel") == "alternate" }) {
			bad = append(bad, where+": neither atom:content nor a link rel=alternate")
		}
		if id := strings.TrimSpace(firstText(e.all("id"))); ids[id] {
			bad = append(bad, where+": atom:id "+id+" again")
		} else {
			ids[id] = true
		}
	}
	return bad
}

func firstText(ns []xmlNode) string {
	if len(ns) == 0 {
		return ""
	}
	return ns[0].Text
}

// feedOf fetches a feed: it must be Atom, accepted by a feed reader's
// parser (gofeed, which also tells RSS from Atom) and keep RFC 4287.
func feedOf(t *testing.T, url string) *atom.Feed {
	t.Helper()
	res, body := ask(t, url)
	if res.StatusCode != http.StatusOK || !strings.HasPrefix(res.Header.Get("Content-Type"), "application/atom+xml") {
		t.Fatalf("GET %s: %d, %s\n%s", url, res.StatusCode, res.Header.Get("Content-Type"), body)
	}
	if bad := rfc4287(body); len(bad) > 0 {
		t.Errorf("GET %s: not valid per RFC 4287:\n  %s\n%s", url, strings.Join(bad, "\n  "), body)
	}
	if got := gofeed.DetectFeedType(bytes.NewReader(body)); got != gofeed.FeedTypeAtom {
		t.Errorf("GET %s: a feed reader takes it for %v, want Atom", url, got)
	}
	if _, err := gofeed.NewParser().Parse(bytes.NewReader(body)); err != nil {
		t.Errorf("GET %s: a feed reader's parser refuses it: %v", url, err)
	}
	f, err := (&atom.Parser{}).Parse(bytes.NewReader(body))
	if err != nil {
		t.Fatalf("GET %s: the Atom parser refuses it: %v\n%s", url, err, body)
	}
	return f
}

// entryIDs are a feed's entries' ids by their video's page.
func entryIDs(t *testing.T, f *atom.Feed) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, e := range f.Entries {
		for _, l := range e.Links {
			if l.Rel == "alternate" {
				out[strings.TrimPrefix(l.Href, "/videos/")] = e.ID
			}
		}
	}
	return out
}

// TestFeedsRoundTrip: a region's chart and the worldwide page are Atom
// feeds a feed reader accepts, valid per RFC 4287; after the next run, a
// video that stayed is the same entry, a new one a new entry, one that
// left is gone; the same video is a different entry in each feed.
func TestFeedsRoundTrip(t *testing.T) {
	t.Parallel()
	db := storetest.Open(t)
	t0 := time.Date(2026, 11, 20, 9, 0, 0, 0, time.UTC)
	now := t0.Add(time.Minute)
	regionRun(t, db, "US", "", t0, worldVideos(t0, "stays", "leaves", "both")...)
	regionRun(t, db, "GB", "", t0, worldVideos(t0, "both")...)
	s, err := New(Config{DB: db, Listen: "127.0.0.1:0", Clock: clock.Func(func() time.Time { return now })})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(s)
	defer srv.Close()

	us1, world1 := feedOf(t, srv.URL+"/charts/US/feed"), feedOf(t, srv.URL+"/worldwide/feed")
	if us1.Title != "Trending in the United States" || len(us1.Entries) != 3 || us1.Entries[0].Title != "Title stays" ||
		!strings.HasPrefix(us1.Entries[0].Summary, "#1 in the United States since Nov 20 09:00 UTC") {
		t.Errorf("the US feed: %q, %d entries, first %+v", us1.Title, len(us1.Entries), us1.Entries[0])
	}
	gb := entryIDs(t, feedOf(t, srv.URL+"/charts/GB/feed"))
	first, world := entryIDs(t, us1), entryIDs(t, world1)
	if first["both"] == gb["both"] || first["both"] == world["both"] || first["both"] == "" {
		t.Errorf("one video in three feeds: ids %q, %q, %q; want one of its own in each", first["both"], gb["both"], world["both"])
	}

	t1 := t0.Add(time.Hour)
	now = t1.Add(time.Minute)
	regionRun(t, db, "US", "", t1, worldVideos(t1, "stays", "new", "both")...)
	settle(t, s, srv.URL, "/charts/US/feed", "/worldwide/feed")
	us2 := feedOf(t, srv.URL+"/charts/US/feed")
	next := entryIDs(t, us2)
	if next["stays"] != first["stays"] || next["both"] != first["both"] {
		t.Errorf("the videos that stayed: ids %q, %q; want %q, %q as before", next["stays"], next["both"], first["stays"], first["both"])
	}
	for _, id := range first {
		if id == next["new"] {
			t.Errorf("the new video's id %q was an entry of the feed before", id)
		}
	}
	if _, ok := next["leaves"]; ok || next["new"] == "" || len(next) != 3 {
		t.Errorf("after the next run the US feed holds %v; want stays, new, both", next)
	}
	if us2.Updated != "2026-11-20T10:00:00Z" || us1.Updated != "2026-11-20T09:00:00Z" {
		t.Errorf("the feed's updated: %s then %s, want each run's time", us1.Updated, us2.Updated)
	}
	world2 := entryIDs(t, feedOf(t, srv.URL+"/worldwide/feed"))
	if world2["new"] == "" || world2["stays"] != world["stays"] {
		t.Errorf("the worldwide feed after the next run: %v, before %v", world2, world)
	}
	if res, _ := ask(t, srv.URL+"/charts/FR/feed"); res.StatusCode != http.StatusNotFound {
		t.Errorf("a region with no chart: %d, want 404", res.StatusCode)
	}
	if res, _ := ask(t, srv.URL+"/charts/USA/feed"); res.StatusCode != http.StatusBadRequest {
		t.Errorf("a bad region: %d, want 400", res.StatusCode)
	}
}

// TestPagesNameTheirFeedAndPreview: the chart and worldwide pages name
// their feed for a browser or a feed reader to find; the chart and video
// pages carry OpenGraph tags for a link's preview, the picture only when
// the pages show thumbnails.
func TestPagesNameTheirFeedAndPreview(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 11, 20, 9, 0, 0, 0, time.UTC)
	for _, thumbs := range []bool{true, false} {
		s, err := New(Config{DB: worldDB(t, t0), Listen: "127.0.0.1:0", NoThumbnails: !thumbs, Clock: clock.Func(func() time.Time { return t0.Add(time.Hour) })})
		if err != nil {
			t.Fatal(err)
		}
		srv := httptest.NewServer(s)
		defer srv.Close()
		chart, video := string(fetch(t, srv.URL+"/charts/GB")), string(fetch(t, srv.URL+"/videos/hit"))
		for page, wants := range map[string][]string{
			chart: {`<link rel="alternate" type="application/atom+xml" href="/charts/GB/feed" title="Trending in the United Kingdom (Atom feed)">`,
				`<meta property="og:title" content="United Kingdom chart">`, `<meta property="og:type" content="website">`,
				`<meta property="og:description" content="The videos trending on YouTube in the United Kingdom, as YouTube gave them at Nov 20 09:01 UTC.">`},
			video: {`<meta property="og:type" content="video.other">`, `<meta property="og:title" content="Title hit">`,
				`<meta property="og:description" content="Channel hit on YouTube">`},
		} {
			for _, want := range wants {
				if !strings.Contains(page, want) {
					t.Errorf("thumbnails %v: no %s in\n%s", thumbs, want, page[:strings.Index(page, "</head>")])
				}
			}
		}
		for page, img := range map[string]string{chart: "https://i.ytimg.com/vi/hit/hqdefault.jpg", video: "https://i.ytimg.com/vi/hit/hqdefault.jpg"} {
			if got := strings.Contains(page, `<meta property="og:image" content="`+img+`">`); got != thumbs {
				t.Errorf("thumbnails %v: og:image %s shown %v", thumbs, img, got)
			}
		}
	}
}

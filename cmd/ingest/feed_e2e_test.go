package main

import (
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/mmcdole/gofeed"
)

// TestChartFeedFollowsTheUpstream: a region's Atom feed, served by `ingest
// serve` beside the runs that fill its database, as a feed reader reads it:
// after the next `run --once` fetched a longer chart from the upstream, the
// videos that stayed keep their entries and the ones that entered are
// entries the reader has not seen.
func TestChartFeedFollowsTheUpstream(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.fake.SetChartShape(3, 50)
	h.mustRun(0, "run", "--once", "--regions", "US")
	base := startServe(t, h)
	before := readFeed(t, base+"/charts/US/feed")
	if len(before) != 3 {
		t.Fatalf("the US feed after a run of 3 videos has %d entries: %v", len(before), before)
	}

	h.fake.SetChartShape(5, 50)
	h.mustRun(0, "run", "--once", "--regions", "US")
	// serve reads the store's data mark at most once a second: the feed
	// follows the run within that.
	var after map[string]string
	waitFor(30*time.Second, func() bool {
		after = readFeed(t, base+"/charts/US/feed")
		return len(after) != len(before)
	})
	if len(after) != 5 {
		t.Fatalf("the US feed after a run of 5 videos has %d entries: %v", len(after), after)
	}
	for link, id := range before {
		if after[link] != id {
			t.Errorf("video %s stayed in the chart, yet its entry went from %q to %q", link, id, after[link])
		}
	}
	seen := map[string]bool{}
	for _, id := range before {
		seen[id] = true
	}
	fresh := 0
	for _, v := range h.fake.Chart("US")[3:5] {
		id, ok := after["/videos/"+v.ID]
		switch {
		case !ok:
			t.Errorf("video %s entered the chart but is not in the feed", v.ID)
		case seen[id]:
			t.Errorf("video %s entered the chart under an entry the reader saw before (%q)", v.ID, id)
		default:
			fresh++
		}
	}
	if fresh != 2 {
		t.Errorf("%d new entries, want the 2 videos that entered", fresh)
	}
}

// readFeed parses an Atom feed as a feed reader does: each entry's id by
// the video page it links to.
func readFeed(t *testing.T, url string) map[string]string {
	t.Helper()
	res, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	if err != nil || res.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d, %v\n%s", url, res.StatusCode, err, body)
	}
	f, err := gofeed.NewParser().Parse(strings.NewReader(string(body)))
	if err != nil {
		t.Fatalf("GET %s: a feed reader refuses it: %v\n%s", url, err, body)
	}
	if f.FeedType != "atom" {
		t.Errorf("GET %s: a feed reader takes it for %q, want atom", url, f.FeedType)
	}
	out := map[string]string{}
	for _, e := range f.Items {
		link := e.Link
		if i := strings.Index(link, "/videos/"); i >= 0 {
			link = link[i:]
		}
		out[link] = e.GUID
	}
	return out
}

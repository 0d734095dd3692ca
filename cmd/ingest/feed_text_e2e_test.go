package main

import (
	"bytes"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestFeedEntriesMoveWithTheirText: `ingest serve` over a database `run
// --once` fills from the fake upstream, as the upstream changes under it.
// A video renamed upstream changes its entry in the chart's feed and in
// the worldwide feed, dated after the run's start, and no other entry; a
// video that leaves one region's chart and stays in another's changes its
// worldwide entry, dated by the run of the chart it left, and no other
// entry the feeds had; the run after each, changing nothing, leaves both
// feeds the same to the byte, their ETags too.
func TestFeedEntriesMoveWithTheirText(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	// A video that charts in both regions is moved to the last rank of
	// GB's chart, which is cut there: when it leaves GB's chart no other
	// video of GB moves, one enters at its rank.
	depth, shared := 0, ""
	us, gb := h.fake.Chart("US"), h.fake.Chart("GB")
	for i, v := range gb[:20] {
		for j, w := range us[1:20] {
			if v.ID == w.ID && depth == 0 {
				depth, shared = max(i, j+1)+1, v.ID
				h.fake.Swap("GB", i+1, depth)
			}
		}
	}
	if depth == 0 {
		t.Fatal("the fake's US and GB charts share no video near their tops")
	}
	h.fake.SetChartShape(depth, 50)
	runs := "US,GB"
	h.mustRun(0, "run", "--once", "--regions", runs)
	plans := filepath.Join(h.dir, "plans.yaml")
	if err := os.WriteFile(plans, []byte("plans:\n  anonymous: {limit: 1000000, window: 1h}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	base := startServe(t, h, "--public-url", publicSite, "--api-plans", plans)
	feeds := []string{"/charts/US/feed", "/worldwide/feed"}
	// next runs both regions again, in a later second than the feeds'
	// dates (Atom's dates are to the second), and reads the feeds once
	// serve built them again: until shows holds of each, or, for a run
	// that changes nothing, once a build beside the requests is over.
	next := func(shows func(path string, body []byte) bool) map[string]feedAnswer {
		t.Helper()
		run, at := chartRun(t, base, "US")
		for _, path := range feeds {
			at = max(at, updatedOf(string(getFeed(t, base+path).body)))
		}
		if !waitFor(cmdTimeout, func() bool { return time.Now().UTC().Format(time.RFC3339) > at }) {
			t.Fatalf("the clock never passed %s", at)
		}
		since := keptBuilds(t, base)
		h.mustRun(0, "run", "--once", "--regions", runs)
		awaitRun(t, base, run)
		out := map[string]feedAnswer{}
		for _, path := range feeds {
			if shows == nil {
				out[path] = freshFeed(t, base, path, since)
				continue
			}
			if !waitFor(cmdTimeout, func() bool { out[path] = getFeed(t, base+path); return shows(path, out[path].body) }) {
				t.Fatalf("%s never showed the run's change:\n%s", path, out[path].body)
			}
		}
		return out
	}
	// same says a run that changed nothing upstream changed no byte.
	same := func(what string, before, after map[string]feedAnswer) {
		t.Helper()
		for _, path := range feeds {
			if !bytes.Equal(before[path].body, after[path].body) || before[path].etag != after[path].etag {
				t.Errorf("%s: a run that changed nothing after %s changed the feed: ETag %s then %s", path, what, before[path].etag, after[path].etag)
				was := entriesOf(t, before[path].body)
				for id, e := range entriesOf(t, after[path].body) {
					if e != was[id] {
						t.Errorf("%s: video %s's entry went from\n%s\nto\n%s", path, id, was[id], e)
					}
				}
			}
		}
	}
	first := map[string]feedAnswer{}
	for _, path := range feeds {
		first[path] = getFeed(t, base+path)
	}

	renamed := us[0].ID
	h.fake.Retitle(renamed, "A title its owner chose later")
	retitled := next(func(_ string, body []byte) bool { return bytes.Contains(body, []byte("A title its owner chose later")) })
	_, usAt := chartRun(t, base, "US")
	for _, path := range feeds {
		before, after := entriesOf(t, first[path].body), entriesOf(t, retitled[path].body)
		for id, e := range after {
			if id == renamed {
				continue
			}
			if e != before[id] {
				t.Errorf("%s: video %s kept its title and place, yet its entry changed:\n%s\n---\n%s", path, id, before[id], e)
			}
		}
		e, was := after[renamed], before[renamed]
		at := updatedOf(e)
		switch {
		case !strings.Contains(e, "A title its owner chose later"):
			t.Errorf("%s: the renamed video's entry does not carry its new title:\n%s", path, e)
		case at < usAt:
			t.Errorf("%s: the renamed video's entry is updated %s, before it %s; want after that, and not before the run's start %s\n%s",
				path, at, updatedOf(was), usAt, e)
		case updatedOf(string(retitled[path].body)) != at:
			t.Errorf("%s: the feed is updated %s, not its latest entry's %s", path, updatedOf(string(retitled[path].body)), at)
		}
	}
	same("a rename", retitled, next(nil))

	h.fake.Leave("GB", shared)
	leftAt := next(func(path string, body []byte) bool {
		return path != "/worldwide/feed" || entriesOf(t, body)[shared] != entriesOf(t, retitled[path].body)[shared]
	})
	_, gbAt := chartRun(t, base, "GB")
	if !bytes.Equal(leftAt["/charts/US/feed"].body, retitled["/charts/US/feed"].body) {
		t.Errorf("the US feed changed when a video left GB's chart")
	}
	entered := h.fake.Chart("GB")[depth-1].ID // the video GB's chart took in at the left one's rank
	if entered == shared {
		t.Fatalf("the fake still charts %s in GB", shared)
	}
	before, after := entriesOf(t, retitled["/worldwide/feed"].body), entriesOf(t, leftAt["/worldwide/feed"].body)
	for id, e := range before {
		switch {
		case id == shared:
			if after[id] == e || updatedOf(after[id]) != gbAt {
				t.Errorf("/worldwide/feed: video %s left GB's chart at the run of %s, yet its entry is updated %s:\n%s\n---\n%s",
					id, gbAt, updatedOf(after[id]), e, after[id])
			}
		case id == entered:
		case after[id] != e:
			t.Errorf("/worldwide/feed: video %s stayed where it charts, yet its entry changed:\n%s\n---\n%s", id, e, after[id])
		}
	}
	same("a video left a region", leftAt, next(nil))
}

// chartRun is the run of region's chart that the served API shows and
// its start, as an Atom date.
func chartRun(t *testing.T, base, region string) (int64, string) {
	t.Helper()
	res, err := http.Get(base + "/api/v1/charts/" + region)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var c struct {
		RunID int64     `json:"run_id"`
		At    time.Time `json:"at"`
	}
	if err := json.NewDecoder(res.Body).Decode(&c); err != nil {
		t.Fatal(err)
	}
	return c.RunID, c.At.UTC().Format(time.RFC3339)
}

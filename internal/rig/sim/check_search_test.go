package sim

import (
	"context"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// searchedHistory is a reader's two searches after a chart: a video it
// was served, found by its title, and a word in a region and a language
// whose every hit is of both.
func searchedHistory() *History {
	h := rankedHistory()
	h.Searched = []Searched{
		{At: t0.Add(2 * time.Minute), Query: `"Morning briefing: pizza"`, Want: "a01",
			Hits: []Shown{{ID: "a07", Snippet: "[Morning] show"}, {ID: "a01", AudioLanguage: "en", Language: "en-GB", Snippet: "[Morning briefing]: [pizza]"}}},
		{At: t0.Add(2 * time.Minute), Query: "football", Region: "US", Language: "hi", Hits: []Shown{
			{ID: "a02", AudioLanguage: "hi", Regions: []string{"IN", "US"}, Snippet: "…and [FOOTBALL] tonight"},
			{ID: "a03", Language: "HI-Latn", Regions: []string{"US"}, Snippet: "[FÓOTBALL] [MV] highlights"},
		}},
	}
	return h
}

func TestCheckFindsASearchThatBrokeItsFilters(t *testing.T) {
	if f := checkSearches(searchedHistory()); len(f) != 0 {
		t.Fatalf("hits of the region and the language, the known video found: %q", f)
	}
	for name, c := range map[string]struct {
		fault func(*History)
		want  string
	}{
		"a hit of another language": {func(h *History) { h.Searched[1].Hits[1].Language = "en" },
			`football (region "US", language "hi") found a03, in audio "" and text "en"`},
		"a hit without a language": {func(h *History) { h.Searched[1].Hits[0].AudioLanguage = "" },
			`found a02, in audio "" and text ""`},
		"a narrower tag's prefix alone": {func(h *History) { h.Searched[1].Hits[0].AudioLanguage = "hil" },
			`found a02, in audio "hil"`},
		"a hit of another region": {func(h *History) { h.Searched[1].Hits[1].Regions = []string{"GB"} },
			"found a03, charted in [GB] only"},
		"the known video missed": {func(h *History) { h.Searched[0].Hits = h.Searched[0].Hits[:1] },
			`"Morning briefing: pizza" (region "", language "") did not find a01, served in the chart that instant, among its 1 hits`},
		"a hit with no word marked": {func(h *History) { h.Searched[0].Hits[0].Snippet = "Morning show" },
			`found a07, its snippet "Morning show" marking no word of the query`},
		"a hit marking another word": {func(h *History) { h.Searched[1].Hits[0].Snippet = "[Cricket] tonight" },
			`football (region "US", language "hi") found a02, its snippet "[Cricket] tonight" marking no word`},
		"an error while up": {func(h *History) { h.Searched[1].Err = "/api/v1/search: 500 Internal Server Error" },
			"the process up, football: /api/v1/search: 500 Internal Server Error"},
	} {
		h := searchedHistory()
		c.fault(h)
		if f := checkSearches(h); len(f) == 0 || !strings.Contains(f[0], c.want) {
			t.Errorf("%s: %q", name, f)
		}
	}
	deeper := searchedHistory()
	deeper.Searched[0].Hits, deeper.Searched[0].More = deeper.Searched[0].Hits[:1], true
	deeper.Searched = append(deeper.Searched, Searched{Query: "x", Want: "a09", Down: true, Err: "dial: closed"})
	if f := checkSearches(deeper); len(f) != 1 || !strings.Contains(f[0], "0 finding a video they knew: the search was not checked") {
		t.Errorf("the known video past the pages read, a search while down: %q", f)
	}
}

type refused struct{}

func (refused) RoundTrip(*http.Request) (*http.Response, error) { return nil, net.ErrClosed }

func TestSearchThatMetTheProcessDownIsSaidDown(t *testing.T) {
	client := &http.Client{Transport: refused{}}
	lives := []bool{true, false} // up at the start, down at the end
	s := search(context.Background(), client, Searched{Query: "football"}, func() bool { up := lives[0]; lives = lives[1:]; return up })
	if !s.Down || s.Err == "" {
		t.Errorf("a search the stop cut short: down %t, err %q", s.Down, s.Err)
	}
}

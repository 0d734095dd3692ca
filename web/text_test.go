package web

import (
	"strings"
	"testing"
	"time"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/store"
)

// A chart prints movement only with derived figures on, and marks them as
// computed; each entry's movement reads as the page marks it.
func TestChartText(t *testing.T) {
	at := "2026-11-21T09:00:00Z"
	one, three := 1, 3
	views := int64(1234567)
	entries := []EntryJSON{
		{Rank: 1, PrevRank: &three, Movement: 2, VideoCard: VideoCard{ID: "a", Title: "Alpha", Channel: "Ch"}, Views: &views},
		{Rank: 2, PrevRank: &one, Movement: -1, VideoCard: VideoCard{ID: "b", Title: "Beta"}},
		{Rank: 3, PrevRank: &three, VideoCard: VideoCard{ID: "c", Title: "Gamma"}},
		{Rank: 4, New: true, VideoCard: VideoCard{ID: "d", Title: "Delta"}},
	}
	for _, c := range []struct {
		name    string
		chart   ChartJSON
		want    []string
		notWant []string
	}{
		{"plain", ChartJSON{Region: "US", RunID: 7, At: &at, Status: "completed", Entries: entries},
			[]string{"US chart, run 7 at " + at + " (completed)", "1,234,567", "Alpha · Ch · https://youtu.be/a", "hidden  Beta"},
			[]string{"move*", "new", "+2", "computed by ingest", "  0  "}},
		{"derived", ChartJSON{Region: "US", Category: "10", RunID: 7, At: &at, Status: "completed", Derived: true, Entries: entries},
			[]string{"US · music chart", "move*", "+2", "-1", "  =  ", "new", "* computed by ingest"}, nil},
		{"no videos in a language", ChartJSON{Region: "IN", Language: "hi", RunID: 1, At: &at, Status: "completed"},
			[]string{"IN · hi chart", "no videos in hi on this chart"}, []string{"#"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			var b strings.Builder
			c.chart.WriteText(&b)
			for _, w := range c.want {
				if !strings.Contains(b.String(), w) {
					t.Errorf("got\n%s\nwant it to contain %q", b.String(), w)
				}
			}
			for _, w := range c.notWant {
				if strings.Contains(b.String(), w) {
					t.Errorf("got\n%s\nwant no %q", b.String(), w)
				}
			}
		})
	}
}

// Search results print a hidden count as hidden, never 0, and the snippet
// on one line.
func TestHitsText(t *testing.T) {
	var b strings.Builder
	WriteHits(&b, nil)
	if got := b.String(); got != "no matches\n" {
		t.Errorf("no hits: got %q", got)
	}
	b.Reset()
	n := int64(4200)
	WriteHits(&b, []store.Hit{
		{StoredVideo: store.StoredVideo{Video: ingest.Video{ID: "a", Title: "Alpha", ChannelTitle: "Ch", ViewCount: &n},
			LastSeen: time.Date(2026, 11, 21, 9, 5, 0, 0, time.UTC)}, Regions: []string{"US", "GB"}, Snippet: "one\n  two"},
		{StoredVideo: store.StoredVideo{Video: ingest.Video{ID: "b", Title: "Beta"}}},
	})
	for _, w := range []string{" 1. Alpha\n    Ch · 4,200 views (at 2026-11-21 09:05 UTC) · US,GB · https://youtu.be/a\n    one two\n",
		" 2. Beta\n     · views hidden"} {
		if !strings.Contains(b.String(), w) {
			t.Errorf("got\n%s\nwant it to contain %q", b.String(), w)
		}
	}
}

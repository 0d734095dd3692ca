package fakeyt

import (
	"net/url"
	"testing"
)

// A video deleted or made private is gone from every answer: by id, on
// the chart, in the stats.
func TestDeletedAndPrivateVideosAreGone(t *testing.T) {
	t.Parallel()
	fx := newFixture(t)
	chart := fx.fake.Chart("US")
	deleted, private, kept := chart[0].ID, chart[1].ID, chart[2].ID
	ids := func(path string, q url.Values) map[string]bool {
		q.Set("key", key)
		code, b := fx.get(t, path, q.Encode())
		if code != 200 {
			t.Fatalf("%s: %d %s", path, code, b)
		}
		out := map[string]bool{}
		for _, it := range decode(t, b).Items {
			if id, ok := it["id"].(string); ok {
				out[id] = true
			}
		}
		return out
	}
	byID := url.Values{"part": {"snippet,statistics"}, "id": {deleted + "," + private + "," + kept}}
	if got := ids("/youtube/v3/videos", byID); len(got) != 3 {
		t.Fatalf("before: %d of 3 videos by id", len(got))
	}
	fx.fake.Delete(deleted)
	fx.fake.MakePrivate(private)
	got := ids("/youtube/v3/videos", byID)
	if got[deleted] || got[private] || !got[kept] {
		t.Errorf("by id after deleting %s and hiding %s: %v", deleted, private, got)
	}
	onChart := ids("/youtube/v3/videos", url.Values{"part": {"snippet"}, "chart": {"mostPopular"}, "regionCode": {"US"}, "maxResults": {"50"}})
	if onChart[deleted] || onChart[private] || !onChart[kept] {
		t.Errorf("the chart still shows a removed video, or lost a kept one")
	}
	stats := ids("/youtube/v3/videos:batchGetStats", url.Values{"part": {"statistics"}, "id": {deleted + "," + kept}})
	if stats[deleted] {
		t.Errorf("batchGetStats still counts a deleted video")
	}
}

package fetch

import (
	"encoding/json"
	"testing"
)

// TestAbsentCountsAreNil: an item without statistics has no view count at
// all, and a hidden like or comment count is absent, not zero.
func TestAbsentCountsAreNil(t *testing.T) {
	t.Parallel()
	body := []byte(`{"items": [
	  {"id": "nostats", "snippet": {"title": "Live now", "liveBroadcastContent": "live"}},
	  {"id": "hidden", "statistics": {"viewCount": "12", "favoriteCount": "0"}},
	  {"id": "all", "statistics": {"viewCount": "0", "likeCount": "3", "commentCount": "4"}}]}`)
	var ans videoAnswer
	if err := json.Unmarshal(body, &ans); err != nil {
		t.Fatal(err)
	}
	vs, err := toVideos(ans.Items)
	if err != nil {
		t.Fatal(err)
	}
	if len(vs) != 3 {
		t.Fatalf("got %d videos", len(vs))
	}
	if v := vs[0]; v.ViewCount != nil || v.LikeCount != nil || v.CommentCount != nil {
		t.Errorf("no statistics: views %v likes %v comments %v, want all nil", v.ViewCount, v.LikeCount, v.CommentCount)
	}
	if v := vs[1]; v.ViewCount == nil || *v.ViewCount != 12 || v.LikeCount != nil || v.CommentCount != nil {
		t.Errorf("hidden counts: %+v", v)
	}
	if v := vs[2]; v.ViewCount == nil || *v.ViewCount != 0 || *v.LikeCount != 3 || *v.CommentCount != 4 {
		t.Errorf("all counts (zero views sent): %+v", v)
	}
}

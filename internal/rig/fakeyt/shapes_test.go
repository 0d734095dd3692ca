package fakeyt_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/ingestworks/ingest/internal/rig/fakeyt"
	"github.com/ingestworks/ingest/regions"
)

// The chart of a region whose fixtures carry live items, region
// restrictions and an item without statistics serves them as the real API
// does: liveBroadcastContent, contentDetails.regionRestriction.blocked, and
// no statistics object at all.
func TestChartServesLiveRestrictedAndStatlessItems(t *testing.T) {
	srv := httptest.NewServer(fakeyt.New())
	defer srv.Close()
	live, blocked, nostats := 0, 0, 0
	for _, region := range append(append([]string{}, regions.Default...), fakeyt.ExtraRegions...) {
		token := ""
		for {
			res, err := http.Get(srv.URL + "/youtube/v3/videos?key=k&chart=mostPopular&maxResults=50&part=snippet,statistics,contentDetails&regionCode=" + region + "&pageToken=" + token)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(res.Body)
			res.Body.Close()
			var page struct {
				NextPageToken string
				Items         []map[string]json.RawMessage
			}
			if err := json.Unmarshal(body, &page); err != nil {
				t.Fatalf("%s: %v", region, err)
			}
			for _, it := range page.Items {
				var sn struct{ LiveBroadcastContent string }
				var cd struct {
					RegionRestriction *struct{ Blocked []string }
				}
				_ = json.Unmarshal(it["snippet"], &sn)
				_ = json.Unmarshal(it["contentDetails"], &cd)
				if sn.LiveBroadcastContent == "live" || sn.LiveBroadcastContent == "upcoming" {
					live++
				}
				if cd.RegionRestriction != nil && len(cd.RegionRestriction.Blocked) > 0 {
					blocked++
				}
				if _, ok := it["statistics"]; !ok {
					nostats++
				}
			}
			if page.NextPageToken == "" {
				break
			}
			token = page.NextPageToken
		}
	}
	if live == 0 || blocked == 0 || nostats == 0 {
		t.Errorf("charts served %d live/upcoming items, %d with a region restriction, %d without statistics; want some of each", live, blocked, nostats)
	}
}

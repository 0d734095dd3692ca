package web

import (
	"encoding/json"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/clock"
	"github.com/ingestworks/ingest/internal/rig/storetest"
)

// A count the upstream hid is null on every surface that shows an entry,
// never 0: the chart's entries, a video's history entries and a search
// hit in the API, and "views hidden" on the chart page; a count of 0 the
// upstream sent stays 0.
func TestHiddenCountIsNullEverywhere(t *testing.T) {
	t.Parallel()
	db := storetest.Open(t)
	zero := int64(0)
	hidden := ingest.Video{ID: "vid-hidden", Title: "Hidden concert", CategoryID: "10"}
	none := ingest.Video{ID: "vid-zero", Title: "Zero concert", CategoryID: "10", ViewCount: &zero}
	regionRun(t, db, "US", "", time.Date(2026, 11, 21, 9, 0, 0, 0, time.UTC), hidden, none)
	s, err := New(Config{DB: db, Listen: "127.0.0.1:0", Clock: clock.System})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)

	var chart struct {
		Entries []struct {
			ID    string `json:"id"`
			Views *int64 `json:"views"`
		} `json:"entries"`
	}
	if err := json.Unmarshal(fetch(t, srv.URL+"/api/v1/charts/US"), &chart); err != nil {
		t.Fatal(err)
	}
	if len(chart.Entries) != 2 || chart.Entries[0].Views != nil || chart.Entries[1].Views == nil || *chart.Entries[1].Views != 0 {
		t.Errorf("/api/v1/charts/US entries = %+v, want the hidden count null and the 0 kept", chart.Entries)
	}
	var video struct {
		History []map[string]any `json:"history"`
	}
	if err := json.Unmarshal(fetch(t, srv.URL+"/api/v1/videos/vid-hidden"), &video); err != nil {
		t.Fatal(err)
	}
	if len(video.History) != 1 || video.History[0]["views"] != nil {
		t.Errorf("/api/v1/videos/vid-hidden history = %v, want its views null", video.History)
	}
	var found struct {
		Hits []map[string]any `json:"hits"`
	}
	if err := json.Unmarshal(fetch(t, srv.URL+"/api/v1/search?q=concert"), &found); err != nil {
		t.Fatal(err)
	}
	views := map[any]any{}
	for _, h := range found.Hits {
		views[h["id"]] = h["views"]
	}
	if len(views) != 2 || views["vid-hidden"] != nil || views["vid-zero"] != 0.0 {
		t.Errorf("/api/v1/search hits' views = %v, want the hidden count null and the 0 kept", views)
	}
	page := string(fetch(t, srv.URL+"/charts/US"))
	if got := strings.Count(row(t, page, "vid-hidden"), "views hidden"); got == 0 {
		t.Errorf("the chart page's row of the hidden count does not say views hidden:\n%s", row(t, page, "vid-hidden"))
	}
	if strings.Contains(row(t, page, "vid-zero"), "views hidden") {
		t.Errorf("the chart page hides a count of 0:\n%s", row(t, page, "vid-zero"))
	}
}

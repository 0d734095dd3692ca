package wiring_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/ingestworks/ingest/internal/rig/passtest"
)

// TestServeAPI checks the API's answers a script relies on: the token, the
// error shape, a 404 for a missing video, movement against the previous
// run, and that no secret is served.
func TestServeAPI(t *testing.T) {
	t.Parallel()
	s := serve(t)
	if code, body := s.get(t, "/api/v1/quota", false); code != 401 || !strings.Contains(string(body), `"code": "unauthorized"`) {
		t.Errorf("no token: got %d %s, want 401 unauthorized", code, body)
	}
	if code, _ := s.get(t, "/", false); code != http.StatusUnauthorized {
		t.Errorf("a page asked for by a script with no token: got %d, want 401", code)
	}
	cases := []struct {
		path, param string
		status      int
	}{
		{"/api/v1/search?q=prank&limit=0", "limit", 400},
		{"/api/v1/search?q=", "q", 400},
		{"/api/v1/search?q=prank&region=USA", "region", 400},
		{"/api/v1/search?q=prank&cursor=zzz", "cursor", 400},
		{"/api/v1/charts/US?at=yesterday", "at", 400},
		{"/api/v1/charts/US?category=polka", "category", 400},
		{"/api/v1/charts/US?category=gaming", "", 404},
		{"/api/v1/runs?kind=daily", "kind", 400},
		{"/api/v1/videos/no-such-video", "", 404},
		{"/api/v1/charts/FR", "", 404},
	}
	for _, c := range cases {
		code, body := s.get(t, c.path, true)
		var e errorJSON
		if err := json.Unmarshal(body, &e); err != nil || code != c.status || e.Error.Status != c.status || e.Error.Parameter != c.param || e.Error.Message == "" {
			t.Errorf("%s: got %d %s, want %d naming %q", c.path, code, body, c.status, c.param)
		}
	}
	var chart struct {
		PrevRunID *int64 `json:"previous_run_id"`
		Entries   []struct {
			PrevRank  *int    `json:"previous_rank"`
			ViewTrend []int64 `json:"views_trend"`
		}
	}
	_, body := s.get(t, "/api/v1/charts/US", true)
	if err := json.Unmarshal(body, &chart); err != nil || chart.PrevRunID == nil || len(chart.Entries) == 0 ||
		chart.Entries[0].PrevRank == nil || len(chart.Entries[0].ViewTrend) != 2 {
		t.Errorf("US chart after two runs: want a previous run, ranks and two-point trends, got %s", body)
	}
	checkCategoryChart(t, s)
	var video struct {
		Regions []struct{ Region, Category string }
		Counts  []struct{ Views int64 } `json:"views_over_time"`
	}
	_, body = s.get(t, "/api/v1/videos/"+url.PathEscape(s.hostileID(t)), true)
	if err := json.Unmarshal(body, &video); err != nil || len(video.Counts) == 0 || len(video.Regions) == 0 {
		t.Errorf("video after two runs and tracking: want charts and views over time, got %.600s", body)
	}
	var quota struct {
		Hourly []struct {
			Pool  string
			Units []int64
		}
		Daily []struct {
			Pool  string
			Units []int64
		}
	}
	_, body = s.get(t, "/api/v1/quota", true)
	if err := json.Unmarshal(body, &quota); err != nil {
		t.Fatal(err)
	}
	sum := func(pool string, rows []struct {
		Pool  string
		Units []int64
	}) (n int64) {
		for _, r := range rows {
			for _, u := range r.Units {
				if r.Pool == pool {
					n += u
				}
			}
		}
		return n
	}
	// Every call of this test was made in the last minutes: the 24-hour
	// and the 30-day charts must both hold all of them.
	if h, d := sum("default", quota.Hourly), sum("default", quota.Daily); h == 0 || h != d {
		t.Errorf("quota: default pool's units %d by hour, %d by day; want the same, not zero", h, d)
	}
	session := s.signIn(t)
	for _, path := range []string{"/api/v1/quota", "/", "/api/v1/runs"} {
		req, _ := http.NewRequest("GET", s.base+path, nil)
		req.AddCookie(session)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != 200 || strings.Contains(string(b), passtest.Key) {
			t.Errorf("%s with the cookie: got %d; the API key must never be served", path, res.StatusCode)
		}
	}
}

// categoryChart is what the category test reads of a chart.
type categoryChart struct {
	Category  string `json:"category"`
	RunID     int64  `json:"run_id"`
	PrevRunID *int64 `json:"previous_run_id"`
	Entries   []struct {
		ID        string
		Category  string  `json:"category_id"`
		PrevRank  *int    `json:"previous_rank"`
		ViewTrend []int64 `json:"views_trend"`
	}
}

// checkCategoryChart: the music chart (by name or id) is its own chart,
// with its own runs and movement, and the unfiltered chart is not it.
func checkCategoryChart(t *testing.T, s *served) {
	t.Helper()
	var all, music, byID categoryChart
	for path, c := range map[string]*categoryChart{"/api/v1/charts/US": &all, "/api/v1/charts/US?category=music": &music,
		"/api/v1/charts/us?category=10": &byID} {
		code, body := s.get(t, path, true)
		if err := json.Unmarshal(body, c); code != 200 || err != nil {
			t.Fatalf("%s: %d %v\n%s", path, code, err, body)
		}
	}
	if music.Category != "10" || byID.RunID != music.RunID || len(music.Entries) == 0 || music.PrevRunID == nil {
		t.Errorf("music chart: category %q run %d (by id %d), %d entries, previous run %v; want 10, the same run, entries and a previous run",
			music.Category, music.RunID, byID.RunID, len(music.Entries), music.PrevRunID)
	}
	if music.RunID == all.RunID || (all.PrevRunID != nil && music.PrevRunID != nil && *music.PrevRunID == *all.PrevRunID) {
		t.Errorf("the music chart's runs (%d, %v) are the unfiltered chart's (%d, %v)", music.RunID, music.PrevRunID, all.RunID, all.PrevRunID)
	}
	for _, e := range music.Entries {
		if e.Category != "10" || e.PrevRank == nil || len(e.ViewTrend) != 2 {
			t.Errorf("music chart entry %s: category %q, previous rank %v, trend %v; want 10, a rank in the previous music run, two points",
				e.ID, e.Category, e.PrevRank, e.ViewTrend)
			break
		}
	}
	var runs struct {
		Runs []struct {
			ID       int64
			Category string
		}
	}
	if _, body := s.get(t, "/api/v1/runs?region=US&kind=trending&limit=4", true); json.Unmarshal(body, &runs) != nil {
		t.Errorf("runs: %s", body)
	}
	found := false
	for _, r := range runs.Runs {
		if r.ID == music.RunID {
			found = true
			if r.Category != "10" {
				t.Errorf("runs: the music chart's run %d says category %q, want 10", r.ID, r.Category)
			}
		}
	}
	if !found {
		t.Errorf("runs: the US runs %+v do not list the music chart's run %d", runs.Runs, music.RunID)
	}
	others := 0
	for _, e := range all.Entries {
		if e.Category != "10" {
			others++
		}
	}
	if others == 0 {
		t.Errorf("the unfiltered US chart holds only music: it was read from the music chart's run")
	}
}

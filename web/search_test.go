package web

import (
	"context"
	"fmt"
	"net/http/httptest"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/store"
)

// searchServer serves a database whose US chart holds 23 football videos
// and one about a lone tuba.
func searchServer(t *testing.T) *httptest.Server {
	t.Helper()
	db, err := store.Open(context.Background(), filepath.Join(t.TempDir(), "ingest.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	var vs []ingest.Video
	for i := range 23 {
		vs = append(vs, ingest.Video{ID: fmt.Sprintf("fb-%02d", i), Title: fmt.Sprintf("Football match %d", i), CategoryID: "17"})
	}
	vs = append(vs, ingest.Video{ID: "tuba", Title: "A lone tuba", CategoryID: "10"})
	chartRun(t, db, "", time.Date(2026, 11, 20, 9, 0, 0, 0, time.UTC), vs...)
	s, err := New(Config{DB: db, Listen: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	return srv
}

// TestSearchPageCountsAndNumbers: the page says how many videos match in
// all, numbers its hits on from the page before, says "1 hit", and an
// empty result is a sentence, not a numbered item.
func TestSearchPageCountsAndNumbers(t *testing.T) {
	t.Parallel()
	srv := searchServer(t)
	first := string(fetch(t, srv.URL+"/search?q=football"))
	if !strings.Contains(first, "23 hits for “football”") {
		t.Errorf("page 1: no total of 23 in\n%s", first)
	}
	if !strings.Contains(first, `<ol class="hits" start="1">`) || strings.Count(first, `<li class="hit">`) != 20 {
		t.Errorf("page 1: want 20 hits numbered from 1")
	}
	next := regexp.MustCompile(`<a class="next" href="([^"]+)"`).FindStringSubmatch(first)
	if next == nil {
		t.Fatalf("page 1: no link to the next hits")
	}
	second := string(fetch(t, srv.URL+strings.ReplaceAll(next[1], "&amp;", "&")))
	if !strings.Contains(second, `<ol class="hits" start="21">`) || !strings.Contains(second, "23 hits") ||
		!strings.Contains(second, "showing 21–23") || strings.Count(second, `<li class="hit">`) != 3 {
		t.Errorf("page 2: want hits 21 to 23 of 23, numbered on from 21\n%s", second)
	}
	one := string(fetch(t, srv.URL+"/search?q=tuba"))
	if !strings.Contains(one, "1 hit for “tuba”") {
		t.Errorf("one match: no \"1 hit\" in\n%s", one)
	}
	none := string(fetch(t, srv.URL+"/search?q=zither"))
	if strings.Contains(none, "<ol") || strings.Contains(none, "<li") && strings.Contains(none, "Nothing") ||
		!strings.Contains(none, `<p class="empty">No videos match “zither”.</p>`) {
		t.Errorf("no match: want a plain sentence, no list\n%s", none)
	}
	api := string(fetch(t, srv.URL+"/api/v1/search?q=football&limit=5"))
	if !strings.Contains(api, `"total": 23`) {
		t.Errorf("API: no total of 23 in %s", api)
	}
}

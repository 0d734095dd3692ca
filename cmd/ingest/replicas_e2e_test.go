package main

import (
	"encoding/json"
	"io"
	"net/http"
	"testing"
	"time"
)

// TestTwoServesSendTheSameValidators: two `ingest serve --public` on one
// database, the second started in a later second than the first built its
// pages, send the same bytes, ETag, Last-Modified, Cache-Control and
// Surrogate-Key for every reader's route: a cache in front of both, or a
// reader sent to either, gets its 304 from the other.
func TestTwoServesSendTheSameValidators(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.mustRun(0, "run", "--once", "--regions", "US,GB")
	first := startServe(t, h, "--public", "--public-url", publicSite)
	var chart struct {
		Entries []struct {
			ID string `json:"id"`
		} `json:"entries"`
	}
	res, err := http.Get(first + "/api/v1/charts/US")
	if err != nil {
		t.Fatal(err)
	}
	err = json.NewDecoder(res.Body).Decode(&chart)
	res.Body.Close()
	if err != nil || len(chart.Entries) == 0 {
		t.Fatalf("the US chart: %v, %d entries", err, len(chart.Entries))
	}
	paths := []string{"/", "/charts/US", "/api/v1/charts/US", "/charts/GB/feed", "/worldwide", "/api/v1/worldwide",
		"/worldwide/feed", "/videos/" + chart.Entries[0].ID, "/api/v1/videos/" + chart.Entries[0].ID, "/search?q=a",
		"/sitemap.xml", "/robots.txt"}
	type answer struct {
		code   int
		body   string
		header map[string]string
	}
	ask := func(base, path string) answer {
		t.Helper()
		res, err := http.Get(base + path)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		a := answer{code: res.StatusCode, body: string(b), header: map[string]string{}}
		for _, k := range []string{"ETag", "Last-Modified", "Cache-Control", "Surrogate-Key"} {
			a.header[k] = res.Header.Get(k)
		}
		return a
	}
	built := map[string]answer{}
	for _, p := range paths {
		built[p] = ask(first, p)
	}
	for at := time.Now().Truncate(time.Second); !time.Now().After(at.Add(time.Second)); time.Sleep(50 * time.Millisecond) {
	} // the second server builds in a later second than the first did
	second := startServe(t, h, "--public", "--public-url", publicSite)
	for _, p := range paths {
		a, b := built[p], ask(second, p)
		if a.code != 200 || b.code != 200 || a.body != b.body {
			t.Errorf("%s: %d and %d, the same bytes %v; want one 200", p, a.code, b.code, a.body == b.body)
		}
		for k, v := range a.header {
			if b.header[k] != v {
				t.Errorf("%s: %s %q from the first serve, %q from the second", p, k, v, b.header[k])
			}
		}
		if a.header["Last-Modified"] == "" && p != "/robots.txt" {
			t.Errorf("%s: no Last-Modified", p)
		}
	}
}

package main

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ingestworks/ingest/web"
	"github.com/ingestworks/ingest/web/edge"
)

// keyParamValues are a value for each query parameter a reader's route
// reads (web.ReaderQuery), to ask with.
var keyParamValues = map[string]string{"at": "2026-01-01T00:00:00Z", "category": "10", "cursor": "c3", "language": "en",
	"limit": "5", "q": "music", "region": "GB", "sort": "views"}

// examplePath is a path pattern's route asked for: /charts/{region} as
// /charts/US.
func examplePath(pattern string) string {
	p := strings.TrimPrefix(pattern, "GET ")
	p = strings.NewReplacer("{region}", "US", "{id}", "vid-none", "{file}", "1.xml", "{$}", "").Replace(p)
	if strings.HasSuffix(p, "/static/") {
		p += "style.css"
	}
	return p
}

// TestTheShippedVCLKeysAPageAsTheOriginReadsIt: Varnish, with the
// shipped VCL, in front of serve --public: each reader's route is asked
// of the origin with the query parameters the origin's route table says
// it reads, and no other, sorted; 200 asks of a kept page with unknown
// query strings, its region in small letters or another Host cost the
// origin at most 5 requests; every Accept-Encoding and front page
// Accept-Language tried gets through the cache what the origin sends
// that reader.
func TestTheShippedVCLKeysAPageAsTheOriginReadsIt(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.mustRun(0, "run", "--once", "--regions", "US,GB,JP,DE,FR")
	h.set("INGEST_PUBLIC_URL", "https://charts.example.org")
	origin := closedAddr(t)
	p := h.start("serve", "--listen", origin, "--public", "--cache-control", "s-maxage=3600,stale-while-revalidate=1,stale-if-error=3600")
	if !waitFor(30*time.Second, func() bool { return healthy("http://" + origin) }) {
		t.Fatalf("serve --public never answered\n%s", p.out)
	}
	front := startFront(t, origin)
	cache := startVarnish(t, front.addr, "127.0.0.2")

	// The query each route is asked with, against the origin's rule.
	for pattern, keep := range web.ReaderQuery() {
		path := examplePath(pattern)
		raw := []string{"zz=1"}
		for _, name := range slices.Backward(slices.Sorted(func(yield func(string) bool) {
			for _, n := range keep {
				if !yield(n) {
					return
				}
			}
		})) {
			raw = append(raw, name+"="+keyParamValues[name])
		}
		raw = append(raw, "utm_source=news", "fbclid=x")
		query := strings.Join(raw, "&")
		want := path
		if q := edge.CanonicalQuery(query, keep); q != "" {
			want += "?" + q
		}
		_, n := front.since(0)
		through(t, cache, http.MethodGet, path+"?"+query, "", nil)
		asked, _ := front.since(n)
		if len(asked) != 1 || asked[0].URL.RequestURI() != want {
			var got []string
			for _, r := range asked {
				got = append(got, r.URL.RequestURI())
			}
			t.Errorf("%s asked as %s?%s: the origin was asked %q, want %q once", pattern, path, query, got, want)
		}
	}

	// Junk queries, the region's case and the Host make no new copy.
	if !cached(t, cache, "/charts/US", nil) {
		t.Fatal("/charts/US never came from the cache")
	}
	_, n := front.since(0)
	for i := range 200 {
		path, header := fmt.Sprintf("/charts/US?utm_source=n%d&fbclid=%d", i, i), map[string]string(nil)
		switch i % 4 {
		case 1:
			path = fmt.Sprintf("/charts/us?x=%d", i)
		case 2:
			path, header = fmt.Sprintf("/charts/US?ref=%d", i), map[string]string{"Host": fmt.Sprintf("Mirror%d.example.net", i)}
		case 3:
			path = fmt.Sprintf("/charts/uS?_=%d&gclid=%d", i, i)
		}
		if status, _, _ := through(t, cache, http.MethodGet, path, "", header); status != http.StatusOK {
			t.Errorf("%s: %d, want the page", path, status)
		}
	}
	asked, _ := front.since(n)
	t.Logf("200 asks of /charts/US with unknown queries, small letters and other Hosts: %d origin requests", len(asked))
	if len(asked) > 5 {
		t.Errorf("200 asks of /charts/US with unknown queries, small letters and other Hosts cost the origin %d requests, want at most 5 (first %s)", len(asked), asked[0].URL)
	}

	// Accept-Encoding: the encoding the origin would send that reader.
	for _, ae := range []string{"gzip", "GZIP", "*", "gzip;q=0", "gzip; q=0.0", "deflate, gzip;q=0.5", "identity", "", "br", "*;q=0", "gzip;q=0, *", "x-gzip"} {
		header := map[string]string{"Accept-Encoding": ae}
		direct, _ := throughWhole(t, origin, http.MethodGet, "/worldwide", "", header)
		for range 2 {
			got, _ := throughWhole(t, cache, http.MethodGet, "/worldwide", "", header)
			if got.StatusCode != http.StatusOK || got.Header.Get("Content-Encoding") != direct.Header.Get("Content-Encoding") {
				t.Errorf("/worldwide with Accept-Encoding %q: %d, Content-Encoding %q (X-Cache %q); the origin sends %q",
					ae, got.StatusCode, got.Header.Get("Content-Encoding"), got.Header.Get("X-Cache"), direct.Header.Get("Content-Encoding"))
			}
		}
	}

	// Accept-Language: the front page the origin gives that reader, asked
	// twice round so that each shape meets the copies the others left.
	title := regexp.MustCompile(`<title>[^<]*</title>`)
	shapes := []string{"fr;q=0.1, ja", "De-De", "de-de", "*", ",en", "en-GB;q=0.5, fr;q=0.9", "ja;q=0", "",
		"es-419, de", "fr-CA", "zz, ja-JP", "en-US,en;q=0.9", "fr;Q=0.1, ja", "JA"}
	for round := range 2 {
		for _, al := range shapes {
			header := map[string]string{"Accept-Language": al}
			_, direct := throughWhole(t, origin, http.MethodGet, "/", "", header)
			resp, got := throughWhole(t, cache, http.MethodGet, "/", "", header)
			if resp.StatusCode != http.StatusOK || got != direct {
				t.Errorf("round %d, / with Accept-Language %q: %d %s (X-Cache %q); the origin sends %s",
					round, al, resp.StatusCode, title.FindString(got), resp.Header.Get("X-Cache"), title.FindString(direct))
			}
			// What the exact key costs: one copy a spelling, kept.
			if hit := resp.Header.Get("X-Cache"); round == 1 && hit != "hit" {
				t.Errorf("round 1, / with Accept-Language %q: X-Cache %q, want the copy the first round left", al, hit)
			}
		}
	}
}

// TestTheShippedVCLDecidesWhoTheClientIs: the cache, with the origin
// trusting a range its readers' own connections come from, names the
// client by the connection, whatever X-Forwarded-For it sends: a spoofed
// one is still refused past the anonymous plan; a front proxy trusted in
// the VCL names the client it serves; a client's x-ingest-failed never
// reaches the origin; a kept API answer carries no client's RateLimit.
func TestTheShippedVCLDecidesWhoTheClientIs(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.mustRun(0, "run", "--once", "--regions", "US")
	plans := filepath.Join(h.dir, "plans.yaml")
	if err := os.WriteFile(plans, []byte("plans:\n  anonymous: {limit: 5, window: 1h}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	origin := closedAddr(t)
	p := h.start("serve", "--listen", origin, "--public", "--api-plans", plans, "--trusted-proxies", "127.0.0.0/8",
		"--cache-control", "s-maxage=3600,stale-while-revalidate=1,stale-if-error=3600")
	if !waitFor(30*time.Second, func() bool { return healthy("http://" + origin) }) {
		t.Fatalf("serve --public never answered\n%s", p.out)
	}
	front := startFront(t, origin)
	cache := startVarnish(t, front.addr, "127.0.0.2")

	// Each ask a new page (a limit of its own), so each is the origin's
	// to meter. A decision the limiter could not make in time is served
	// unmetered, so a busy machine may need more than 6 asks; a spoofer
	// the origin believed would never be refused.
	refused := false
	for i := 0; i < 40 && !refused; i++ {
		path := fmt.Sprintf("/api/v1/charts/US?limit=%d", i+1)
		status, _, _ := through(t, cache, http.MethodGet, path, "127.0.0.5", map[string]string{"X-Forwarded-For": fmt.Sprintf("203.0.113.%d", i+1)})
		refused = status == http.StatusTooManyRequests
	}
	if !refused {
		t.Errorf("40 API asks from one address, each with another X-Forwarded-For, on a plan of 5: none refused")
	}
	// Through the trusted front proxy each client it names is its own:
	// one refused, the next still served.
	refused = false
	for i := 0; i < 40 && !refused; i++ {
		path := fmt.Sprintf("/api/v1/charts/US?limit=%d", 50+i)
		status, _, _ := through(t, cache, http.MethodGet, path, frontProxy, map[string]string{"X-Forwarded-For": "198.51.100.9"})
		refused = status == http.StatusTooManyRequests
	}
	if !refused {
		t.Errorf("40 API asks through the front proxy for one client, on a plan of 5: none refused")
	}
	if status, _, _ := through(t, cache, http.MethodGet, "/api/v1/charts/US?limit=100", frontProxy, map[string]string{"X-Forwarded-For": "198.51.100.77"}); status != http.StatusOK {
		t.Errorf("an API ask through the trusted front proxy for another client: %d, want 200 on that client's own plan", status)
	}

	_, n := front.since(0)
	through(t, cache, http.MethodGet, "/charts/US?limit=3", "", map[string]string{"x-ingest-failed": "1"})
	for _, r := range func() []*http.Request { a, _ := front.since(n); return a }() {
		if r.Header.Get("x-ingest-failed") != "" {
			t.Errorf("a client's x-ingest-failed reached the origin (%s)", r.URL)
		}
	}

	through(t, cache, http.MethodGet, "/api/v1/charts/US?limit=30", frontProxy, map[string]string{"X-Forwarded-For": "198.51.100.10"})
	resp, _ := throughWhole(t, cache, http.MethodGet, "/api/v1/charts/US?limit=30", frontProxy, map[string]string{"X-Forwarded-For": "198.51.100.11"})
	if resp.Header.Get("X-Cache") != "hit" || resp.Header.Get("RateLimit") != "" {
		t.Errorf("a kept API answer asked by another client: X-Cache %q, RateLimit %q, want it from the cache with none", resp.Header.Get("X-Cache"), resp.Header.Get("RateLimit"))
	}
}

package web

import (
	"io"
	"net/http"
	"strings"
	"testing"
)

// TestAttributionOnEveryPublicPage: every page a public site's reader
// can reach, error pages included, links YouTube's Terms of Service and
// Google's Privacy Policy and says that the site uses YouTube API
// Services, as the upstream's policies ask of an API client; and none
// speaks of itself as a view of a database.
func TestAttributionOnEveryPublicPage(t *testing.T) {
	t.Parallel()
	srv, _ := chartServer(t, Config{Public: true, Token: testToken})
	for _, path := range []string{"/", "/charts/US", "/charts/US?category=10", "/charts/FR", "/videos/vid-a", "/search", "/search?q=alpha",
		"/search?q=zzz", "/worldwide", "/login", "/no/such/page", "/videos/no-such-video"} {
		res, err := http.Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		page := string(b)
		_, footer, ok := strings.Cut(page, "<footer>")
		if !ok {
			t.Errorf("%s (%d): no footer", path, res.StatusCode)
			continue
		}
		for _, want := range []string{`href="https://www.youtube.com/t/terms"`, `agree to be bound by the <a href="https://www.youtube.com/t/terms"`,
			`href="https://www.google.com/policies/privacy"`, `uses YouTube API Services`, `<strong>Privacy:</strong>`} {
			if !strings.Contains(footer, want) {
				t.Errorf("%s (%d): the footer lacks %s:\n%s", path, res.StatusCode, want, footer)
			}
		}
		if strings.Contains(page, "ingest database") {
			t.Errorf("%s: the page calls itself a view of the ingest database", path)
		}
	}
}

package web

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/ingestworks/ingest/clock"
	"github.com/ingestworks/ingest/internal/rig/storetest"
)

// TestLeadFollowsChoiceThenLanguages: the front page leads with the
// region a reader chose, else the first of their languages that names a
// charted region (its own region, or for a bare language where it is most
// used), else the first default region charted.
func TestLeadFollowsChoiceThenLanguages(t *testing.T) {
	t.Parallel()
	codes := []string{"BR", "DE", "GB", "JP", "US"}
	charted := map[string]bool{}
	for _, c := range codes {
		charted[c] = true
	}
	for _, tc := range []struct {
		cookie, languages string
		want              lead
	}{
		{"", "en-GB,en;q=0.9", lead{"GB", leadLanguage}},
		{"", "pt-BR", lead{"BR", leadLanguage}},
		{"", "ja,en-US;q=0.9,en;q=0.8", lead{"JP", leadLanguage}},
		{"", "de", lead{"DE", leadLanguage}},
		{"", "fr-FR,zh-CN;q=0.9,en-GB;q=0.8", lead{"GB", leadLanguage}}, // FR and CN are not charted
		{"", "en;q=0.5,de-DE", lead{"DE", leadLanguage}},                // the order of preference, not of the header
		{"", "es-419", lead{"US", leadDefault}},                         // names no country
		{"", "*", lead{"US", leadDefault}},
		{"", "", lead{"US", leadDefault}},
		{"", "not a header;;", lead{"US", leadDefault}},
		{"JP", "en-GB", lead{"JP", leadChosen}},
		{"FR", "en-GB", lead{"GB", leadLanguage}}, // a choice with no chart
	} {
		r := httptest.NewRequest("GET", "/", nil)
		if tc.languages != "" {
			r.Header.Set("Accept-Language", tc.languages)
		}
		if tc.cookie != "" {
			r.AddCookie(&http.Cookie{Name: regionCookie, Value: tc.cookie})
		}
		if got := leadFor(r, charted, codes); got != tc.want {
			t.Errorf("cookie %q, Accept-Language %q: lead %+v, want %+v", tc.cookie, tc.languages, got, tc.want)
		}
	}
	if got := leadFor(httptest.NewRequest("GET", "/", nil), map[string]bool{"JP": true}, []string{"JP"}); got != (lead{"JP", leadDefault}) {
		t.Errorf("no default region charted: lead %+v, want the first charted", got)
	}
}

// leadServer serves a database with the unfiltered charts of codes, on
// a clock the test moves.
func leadServer(t *testing.T, now *time.Time, codes ...string) (*Server, *httptest.Server) {
	t.Helper()
	return leadServerWith(t, Config{}, now, codes...)
}

// leadServerWith is leadServer under cfg.
func leadServerWith(t *testing.T, cfg Config, now *time.Time, codes ...string) (*Server, *httptest.Server) {
	t.Helper()
	db := storetest.Open(t)
	for i, code := range codes {
		at := now.Add(-time.Hour + time.Duration(i)*time.Second)
		regionRun(t, db, code, "", at, topVideos(code, at, 3)...)
	}
	cfg.DB, cfg.Listen, cfg.Clock = db, "127.0.0.1:0", clock.Func(func() time.Time { return *now })
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	return s, srv
}

// leads is the region a front page leads with, by its heading's id.
func leads(page string) string {
	_, after, ok := strings.Cut(page, `<h2 id="top-`)
	if !ok {
		return ""
	}
	code, _, _ := strings.Cut(after, `"`)
	return code
}

// TestFrontPageIsKeptPerLead: the front page is built once per lead
// region and change of the data, says that it varies with the languages
// and the cookie, and a conditional request is a 304 that builds
// nothing; a choice made by a plain link is a cookie and a way back to
// the front page, which then leads with it, until "auto" forgets it.
func TestFrontPageIsKeptPerLead(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 20, 12, 0, 0, 0, time.UTC)
	s, srv := leadServer(t, &now, "DE", "GB", "JP", "US")
	res, body := ask(t, srv.URL+"/", "Accept-Language", "en-GB")
	if got := leads(string(body)); got != "GB" {
		t.Fatalf("en-GB: the front page leads with %q, want GB", got)
	}
	if v := res.Header.Get("Vary"); v != "Accept-Language, Cookie, Accept-Encoding" {
		t.Errorf("Vary: %q, want the languages, the cookie and the encoding", v)
	}
	tag := res.Header.Get("ETag")
	before := s.answers.builds.Load()
	for _, h := range [][]string{{"Accept-Language", "en-GB"}, {"Accept-Language", "en-GB,en;q=0.5", "Accept-Encoding", "gzip"}} {
		if res, _ := ask(t, srv.URL+"/", append(h, "If-None-Match", tag)...); res.StatusCode != http.StatusNotModified {
			t.Errorf("%v with its ETag: %d, want 304", h, res.StatusCode)
		}
	}
	res, body = ask(t, srv.URL+"/", "Accept-Language", "de-DE")
	if got := leads(string(body)); got != "DE" || res.Header.Get("ETag") == tag {
		t.Errorf("de-DE: leads with %q (ETag %s), want DE, its own bytes", got, res.Header.Get("ETag"))
	}
	ask(t, srv.URL+"/", "Accept-Language", "de")
	if n := s.answers.builds.Load() - before; n != 1 {
		t.Errorf("two asks for GB's front page, two for DE's: %d builds, want DE's one", n)
	}

	res, _ = ask(t, srv.URL+"/?region=jp", "Accept-Language", "en-GB")
	var chosen *http.Cookie
	for _, c := range res.Cookies() {
		if c.Name == regionCookie {
			chosen = c
		}
	}
	if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != "/" || chosen == nil || chosen.Value != "JP" || chosen.MaxAge <= 0 {
		t.Fatalf("choose JP: %d to %q, cookie %v; want a 303 to / remembering JP", res.StatusCode, res.Header.Get("Location"), chosen)
	}
	_, body = ask(t, srv.URL+"/", "Accept-Language", "en-GB", "Cookie", chosen.String())
	if got := leads(string(body)); got != "JP" || !strings.Contains(string(body), `href="/?region=auto"`) {
		t.Errorf("with the choice: leads with %q, want JP, with a way back to the browser's language", got)
	}
	res, _ = ask(t, srv.URL+"/?region=auto", "Cookie", chosen.String())
	if c := res.Cookies(); res.StatusCode != http.StatusSeeOther || len(c) != 1 || c[0].MaxAge >= 0 {
		t.Errorf("auto: %d, cookies %v; want the choice forgotten", res.StatusCode, c)
	}
	if res, body := ask(t, srv.URL+"/?region=Narnia"); res.StatusCode != http.StatusBadRequest || !strings.Contains(string(body), "region") {
		t.Errorf("region=Narnia: %d\n%s\nwant a 400 naming region", res.StatusCode, body)
	}
}

package web

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"time"

	"golang.org/x/text/language"

	"github.com/ingestworks/ingest/regions"
)

// The front page leads with the reader's region: the one they chose (a
// cookie set by a plain link, /?region=JP, so no script is needed), else
// the first of their browser's languages (Accept-Language) that names a
// charted region, else the first default region charted
// (docs/reference/api/dashboard.md).

// regionCookie remembers the region a reader chose to lead with.
const regionCookie = "region"

// chooseFor is how long a choice is remembered: the longest a browser
// keeps a cookie.
const chooseFor = 400 * 24 * time.Hour

// maxLanguages is how many of Accept-Language's tags are read: a
// browser sends a few, and the answer must stay cheap to find.
const maxLanguages = 8

// Why a region leads the front page.
const (
	leadChosen   = "chosen"   // the reader chose it
	leadLanguage = "language" // the browser's languages name it
	leadDefault  = "default"  // nothing else did: the first default region charted
)

// lead is the region the front page leads with, and why; Region is ""
// when no chart is stored.
type lead struct {
	Region, Why string
}

// key is the lead as the kept answers are keyed by it.
func (l lead) key() string { return l.Region + "/" + l.Why }

// leadFor finds the region r's front page leads with among the charted
// ones (codes, in their order).
func leadFor(r *http.Request, charted map[string]bool, codes []string) lead {
	if c, err := r.Cookie(regionCookie); err == nil && charted[c.Value] {
		return lead{c.Value, leadChosen}
	}
	if code := languageRegion(r.Header.Get("Accept-Language"), charted); code != "" {
		return lead{code, leadLanguage}
	}
	for _, code := range regions.Default {
		if charted[code] {
			return lead{code, leadDefault}
		}
	}
	if len(codes) > 0 {
		return lead{codes[0], leadDefault}
	}
	return lead{}
}

// languageRegion is the first charted region the languages of an
// Accept-Language header name, in the reader's order of preference: a
// tag's own region (en-GB: GB; es-419 names no country and is passed
// over), or for a bare language the region it is most likely used in
// (CLDR's likely subtags: ja: JP, de: DE, en: US); "" when none is
// charted.
func languageRegion(header string, charted map[string]bool) string {
	if header == "" {
		return ""
	}
	tags, _, err := language.ParseAcceptLanguage(header)
	if err != nil {
		return ""
	}
	for i, t := range tags {
		if i == maxLanguages {
			break
		}
		if base, _ := t.Base(); base.String() == "und" {
			continue
		}
		reg, conf := t.Region()
		if code := reg.String(); reg.IsCountry() && conf != language.No && charted[code] {
			return code
		}
	}
	return ""
}

// frontIndex is the charted regions (those with an unfiltered chart) as
// the lead is found among them, kept per store mark so that finding the
// lead of a request reads nothing.
type frontIndex struct {
	mu      sync.Mutex
	mark    string
	charted map[string]bool
	codes   []string
}

// chartedRegions are the regions with an unfiltered chart under mark
// ("": read afresh, and not kept), as a set and in the charts' order.
func (s *Server) chartedRegions(ctx context.Context, mark string) (map[string]bool, []string, error) {
	f := &s.front
	f.mu.Lock()
	if mark != "" && f.mark == mark && f.charted != nil {
		defer f.mu.Unlock()
		return f.charted, f.codes, nil
	}
	f.mu.Unlock()
	charts, err := s.charts.list(ctx, s.cfg.DB)
	if err != nil {
		return nil, nil, err
	}
	charted := map[string]bool{}
	var codes []string
	for _, c := range charts {
		if c.Category == "" && !charted[c.Region] {
			charted[c.Region] = true
			codes = append(codes, c.Region)
		}
	}
	if mark != "" {
		f.mu.Lock()
		defer f.mu.Unlock()
		f.mark, f.charted, f.codes = mark, charted, codes
	}
	return charted, codes, nil
}

type leadKey struct{}

// frontVariant keys the front page's kept answer by its lead, and hands
// the lead to the build; a choice (?region=) is not kept.
func (s *Server) frontVariant(r *http.Request, mark string) (*http.Request, string, bool) {
	if r.URL.Query().Has("region") {
		return r, "", false
	}
	charted, codes, err := s.chartedRegions(r.Context(), mark)
	if err != nil {
		return r, "", false
	}
	l := leadFor(r, charted, codes)
	return r.WithContext(context.WithValue(r.Context(), leadKey{}, l)), l.key(), true
}

// chooseRegion remembers the region a reader chose (?region=JP) and sends
// them back to the front page; "auto" (or nothing) forgets it, so that
// the browser's languages lead again.
func (s *Server) chooseRegion(w http.ResponseWriter, r *http.Request) {
	code := strings.ToUpper(strings.TrimSpace(r.URL.Query().Get("region")))
	c := &http.Cookie{Name: regionCookie, Path: "/", HttpOnly: true, Secure: r.TLS != nil, SameSite: http.SameSiteLaxMode}
	switch {
	case code == "" || code == "AUTO":
		c.MaxAge = -1
	case regions.Valid(code):
		c.Value, c.MaxAge = code, int(chooseFor/time.Second)
	default:
		s.pageFail(w, r, badParam("region", "must be a region code (like GB, JP) or auto, got %q", r.URL.Query().Get("region")))
		return
	}
	http.SetCookie(w, c)
	w.Header().Set("Cache-Control", "no-store")
	http.Redirect(w, r, "/", http.StatusSeeOther)
}

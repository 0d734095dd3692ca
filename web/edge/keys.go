package edge

import (
	"net/http"
	"strings"
)

// SurrogateKey is the header naming what a shared answer shows, one key
// after another, space separated: Fastly's name, which a Varnish in front
// copies to xkey for its xkey module (docs/operations/readers.md). A landing's
// purge names the same keys (web/purge.go).
const SurrogateKey = "Surrogate-Key"

// SiteKey is on every shared answer, so that one purge drops the whole
// site (after an upgrade that changes how every page is drawn).
const SiteKey = "site"

// WithSite is keys with SiteKey first.
func WithSite(keys string) string {
	if keys == "" {
		return SiteKey
	}
	return SiteKey + " " + keys
}

// Show adds keys to what h's answer shows, each once.
func Show(h http.Header, keys ...string) {
	have := strings.Fields(h.Get(SurrogateKey))
	seen := make(map[string]bool, len(have)+len(keys))
	for _, k := range have {
		seen[k] = true
	}
	for _, k := range keys {
		if k != "" && !seen[k] {
			seen[k] = true
			have = append(have, k)
		}
	}
	h.Set(SurrogateKey, strings.Join(have, " "))
}

// Chart names a region's chart, or one category's: chart:US,
// chart:US:10.
func Chart(region, category string) string {
	if category == "" {
		return "chart:" + region
	}
	return "chart:" + region + ":" + category
}

// Video names a video: every answer that lists or shows it carries it.
func Video(id string) string { return "video:" + id }

// Feed names a region's feed (feed:US), or the worldwide one.
func Feed(region string) string { return "feed:" + region }

// Credentialed reports whether r carries anything that may make its
// answer the requester's: a token or any cookie (a session, a region
// chosen).
func Credentialed(r *http.Request) bool {
	return r.Header.Get("Authorization") != "" || r.Header.Get("Cookie") != ""
}

package web

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Who may keep an answer (docs/reference/api/caching.md). A
// reader's page changes only when a run lands, so on a --public listener
// an anonymous reader's answer is one every cache in front may keep and
// serve to the next reader: Cache-Control public, with the lifetimes of
// the site's CachePolicy, and a Surrogate-Key naming what it shows, by
// which a cache can drop exactly the answers a landing changed. Anything
// tied to a person or to the operator is the requester's alone and kept
// by nobody: private, no-store, with no key.
//
//   - shared: a reader's route (Route.shared) answering 200 to a GET or
//     HEAD with no credential (credentialed) on a --public listener;
//   - revalidated (no-cache, as ever): the same on a listener that is not
//     --public and has no token, where the one reader is this host's;
//   - private, no-store: everything else: a token, a session or any
//     cookie, the operator's routes, sign-in, the probes and the metrics,
//     every status but 200.
//
// A handler marks an answer that may be kept by setting Cache-Control to
// revalidate; the transport (send, serveAnswer) turns the mark into the
// header the rules above give, so that no handler decides who keeps it.

// SurrogateKey is the header naming what a shared answer shows, one key
// after another, space separated: Fastly's name, which a Varnish in front
// copies to xkey for its xkey module (docs/operations/readers.md). A landing's
// purge names the same keys (purge.go).
const SurrogateKey = "Surrogate-Key"

// siteKey is on every shared answer, so that one purge drops the whole
// site (after an upgrade that changes how every page is drawn).
const siteKey = "site"

// CachePolicy is how long the caches may keep a shared answer, in whole
// seconds: MaxAge a browser, SMaxAge a shared cache (RFC 9111),
// StaleWhileRevalidate how long past that either may serve its copy while
// it asks for the new one, StaleIfError how long while the origin fails
// (RFC 5861).
type CachePolicy struct {
	MaxAge, SMaxAge, StaleWhileRevalidate, StaleIfError time.Duration
}

// DefaultCachePolicy keeps no copy in a browser past a revalidation, since
// a browser's copy cannot be purged when a run lands; lets a shared cache
// answer a flood for a few seconds at a time, so that a landing reaches
// readers through it within about the two short lifetimes together; and
// serves the copies for a day while the origin is down.
var DefaultCachePolicy = CachePolicy{MaxAge: 0, SMaxAge: 10 * time.Second,
	StaleWhileRevalidate: 10 * time.Second, StaleIfError: 24 * time.Hour}

// PurgedCachePolicy is the default when the caches in front are purged on
// each landing (Config.Purge): they may keep an answer until it changes,
// and the day bounds what a purge lost costs.
var PurgedCachePolicy = CachePolicy{MaxAge: 0, SMaxAge: 24 * time.Hour,
	StaleWhileRevalidate: 10 * time.Second, StaleIfError: 24 * time.Hour}

// interimFor is how long a shared cache may keep a copy from before a
// landing, served while its new one is built: a second, the least
// Cache-Control can say that a cache still keeps (s-maxage=0 is passed).
const interimFor = time.Second

// Interim is p for a copy from before a landing: no browser keeps it, a
// shared cache for interimFor at most, then as p says while it refreshes
// it or while the origin fails.
func (p CachePolicy) Interim() CachePolicy {
	p.MaxAge, p.SMaxAge = 0, min(p.SMaxAge, interimFor)
	return p
}

// cacheDirectives are the names CachePolicy's fields take in Cache-Control
// and in --cache-control, in the header's order.
var cacheDirectives = []string{"max-age", "s-maxage", "stale-while-revalidate", "stale-if-error"}

func (p *CachePolicy) field(name string) *time.Duration {
	return map[string]*time.Duration{"max-age": &p.MaxAge, "s-maxage": &p.SMaxAge,
		"stale-while-revalidate": &p.StaleWhileRevalidate, "stale-if-error": &p.StaleIfError}[name]
}

// String is the Cache-Control of a shared answer under p.
func (p CachePolicy) String() string {
	return "public, " + strings.Join(p.directives(), ", ")
}

// Flag is p as --cache-control takes it.
func (p CachePolicy) Flag() string { return strings.Join(p.directives(), ",") }

func (p CachePolicy) directives() []string {
	var out []string
	for _, name := range cacheDirectives {
		out = append(out, name+"="+strconv.FormatInt(int64(*p.field(name)/time.Second), 10))
	}
	return out
}

// With is p with the directives s gives: a list, "s-maxage=600,
// stale-if-error=86400", each a whole number of seconds or a duration
// (10m); a directive not given keeps p's.
func (p CachePolicy) With(s string) (CachePolicy, error) {
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		name, v, _ := strings.Cut(part, "=")
		f := p.field(strings.ToLower(strings.TrimSpace(name)))
		if f == nil {
			return p, fmt.Errorf("unknown directive %q: want %s", name, strings.Join(cacheDirectives, ", "))
		}
		d, err := seconds(strings.TrimSpace(v))
		if err != nil {
			return p, fmt.Errorf("%s: %w", name, err)
		}
		*f = d
	}
	return p, nil
}

// seconds reads a lifetime: whole seconds, as Cache-Control says them, or
// a duration of whole seconds.
func seconds(v string) (time.Duration, error) {
	if n, err := strconv.ParseInt(v, 10, 32); err == nil && n >= 0 {
		return time.Duration(n) * time.Second, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || d < 0 || d%time.Second != 0 {
		return 0, fmt.Errorf("want whole seconds (600) or a duration (10m), got %q", v)
	}
	return d, nil
}

// shared reports whether rt's answers may be a shared cache's: a reader's
// data (a page or its JSON) or the readers' static files. Sign-in, the
// probes and the operator's routes never are.
func (rt Route) shared() bool {
	return rt.Audience == Reader && (rt.Kind == Page || rt.Kind == API || rt.Pattern == staticPattern)
}

// credentialed reports whether r carries anything that may make its
// answer the requester's: a token or any cookie (a session, a region
// chosen).
func credentialed(r *http.Request) bool {
	return r.Header.Get("Authorization") != "" || r.Header.Get("Cookie") != ""
}

// cacheControl sets h's Cache-Control by the rules above, for an answer
// with status to r on a route that is shared or not; the handler's
// Cache-Control is its mark. A Cache-Control the handler chose itself (a
// static file under its hash) stands.
func (s *Server) cacheControl(h http.Header, r *http.Request, shared bool, status int) {
	cc := h.Get("Cache-Control")
	mayKeep := status == http.StatusOK && (r.Method == http.MethodGet || r.Method == http.MethodHead) &&
		strings.HasPrefix(cc, revalidate)
	switch {
	case mayKeep && shared && s.access == Public && !credentialed(r):
		h.Set("Cache-Control", s.cache.String())
		h.Set(SurrogateKey, keysWithSite(h.Get(SurrogateKey)))
		return
	case mayKeep && shared && s.access == Open && !credentialed(r):
		h.Set("Cache-Control", revalidate)
	case status != http.StatusOK || !strings.HasPrefix(cc, "public"):
		h.Set("Cache-Control", personal)
	}
	h.Del(SurrogateKey)
}

// keysWithSite is keys with siteKey first.
func keysWithSite(keys string) string {
	if keys == "" {
		return siteKey
	}
	return siteKey + " " + keys
}

// showKeys adds keys to what h's answer shows, each once.
func showKeys(h http.Header, keys ...string) {
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

// chartKey names a region's chart, or one category's: chart:US,
// chart:US:10.
func chartKey(region, category string) string {
	if category == "" {
		return "chart:" + region
	}
	return "chart:" + region + ":" + category
}

// videoKey names a video: every answer that lists or shows it carries it.
func videoKey(id string) string { return "video:" + id }

// feedKeyOf names a region's feed (feed:US), or the worldwide one.
func feedKeyOf(region string) string { return "feed:" + region }

// showCards adds the keys of the videos an answer lists, after first's.
func showCards(h http.Header, first []string, cards ...VideoCard) {
	keys := first
	for _, c := range cards {
		keys = append(keys, videoKey(c.ID))
	}
	showKeys(h, keys...)
}

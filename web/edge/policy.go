// Package edge is what the site tells the caches in front of it, and what
// it believes of the proxies there, whatever page or API answer passes:
// how long a cache may keep a shared answer (Policy, Cache-Control's
// lifetimes), by which keys a landing's purge drops it (Surrogate-Key and
// the keys' names), whether a request carries what makes its answer the
// requester's alone (Credentialed), a query cut to the parameters a route
// reads (CanonicalQuery), which the site and the shipped Varnish
// configuration key their copies by alike (docs/reference/api/caching.md),
// and who the client is and whether it came over TLS when a trusted proxy
// says so (Proxies). It knows no route and no page: web decides which
// answers are shared, and says so here.
package edge

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Policy is how long the caches may keep a shared answer, in whole
// seconds: MaxAge a browser, SMaxAge a shared cache (RFC 9111),
// StaleWhileRevalidate how long past that either may serve its copy while
// it asks for the new one, StaleIfError how long while the origin fails
// (RFC 5861).
type Policy struct {
	MaxAge, SMaxAge, StaleWhileRevalidate, StaleIfError time.Duration
}

// DefaultPolicy keeps no copy in a browser past a revalidation, since
// a browser's copy cannot be purged when a run lands; lets a shared cache
// answer a flood for a few seconds at a time, so that a landing reaches
// readers through it within about the two short lifetimes together; and
// serves the copies for a day while the origin is down.
var DefaultPolicy = Policy{MaxAge: 0, SMaxAge: 10 * time.Second,
	StaleWhileRevalidate: 10 * time.Second, StaleIfError: 24 * time.Hour}

// PurgedPolicy is the default when the caches in front are purged on
// each landing (web.Config.Purge): they may keep an answer until it changes,
// and the day bounds what a purge lost costs.
var PurgedPolicy = Policy{MaxAge: 0, SMaxAge: 24 * time.Hour,
	StaleWhileRevalidate: 10 * time.Second, StaleIfError: 24 * time.Hour}

// interimFor is how long a shared cache may keep a copy from before a
// landing, served while its new one is built: a second, the least
// Cache-Control can say that a cache still keeps (s-maxage=0 is passed).
const interimFor = time.Second

// Interim is p for a copy from before a landing: no browser keeps it, a
// shared cache for interimFor at most, then as p says while it refreshes
// it or while the origin fails.
func (p Policy) Interim() Policy {
	p.MaxAge, p.SMaxAge = 0, min(p.SMaxAge, interimFor)
	return p
}

// cacheDirectives are the names Policy's fields take in Cache-Control
// and in --cache-control, in the header's order.
var cacheDirectives = []string{"max-age", "s-maxage", "stale-while-revalidate", "stale-if-error"}

func (p *Policy) field(name string) *time.Duration {
	return map[string]*time.Duration{"max-age": &p.MaxAge, "s-maxage": &p.SMaxAge,
		"stale-while-revalidate": &p.StaleWhileRevalidate, "stale-if-error": &p.StaleIfError}[name]
}

// String is the Cache-Control of a shared answer under p.
func (p Policy) String() string {
	return "public, " + strings.Join(p.directives(), ", ")
}

// Flag is p as --cache-control takes it.
func (p Policy) Flag() string { return strings.Join(p.directives(), ",") }

func (p Policy) directives() []string {
	var out []string
	for _, name := range cacheDirectives {
		out = append(out, name+"="+strconv.FormatInt(int64(*p.field(name)/time.Second), 10))
	}
	return out
}

// With is p with the directives s gives: a list, "s-maxage=600,
// stale-if-error=86400", each a whole number of seconds or a duration
// (10m); a directive not given keeps p's.
func (p Policy) With(s string) (Policy, error) {
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

package edge

import (
	"testing"
	"time"
)

// testPolicy is a policy other than the default, so that a test sees each
// lifetime it was given reach the header.
var testPolicy = Policy{MaxAge: 30 * time.Second, SMaxAge: 10 * time.Minute,
	StaleWhileRevalidate: time.Minute, StaleIfError: time.Hour}

const testPolicyHeader = "public, max-age=30, s-maxage=600, stale-while-revalidate=60, stale-if-error=3600"

// TestPolicyReadsItsDirectives: --cache-control's value is read
// directive by directive, a directive left out keeping its default, and
// a wrong one refused naming what is wrong.
func TestPolicyReadsItsDirectives(t *testing.T) {
	t.Parallel()
	p, err := parsePolicy(" s-maxage=600, stale-if-error=1h ")
	want := DefaultPolicy
	want.SMaxAge, want.StaleIfError = 10*time.Minute, time.Hour
	if err != nil || p != want {
		t.Errorf("s-maxage=600, stale-if-error=1h: %+v, %v; want %+v", p, err, want)
	}
	if p, err := parsePolicy(DefaultPolicy.Flag()); err != nil || p != DefaultPolicy {
		t.Errorf("the default as a flag: %+v, %v; want it back", p, err)
	}
	if p, err := PurgedPolicy.With("max-age=5"); err != nil || p.SMaxAge != PurgedPolicy.SMaxAge || p.MaxAge != 5*time.Second {
		t.Errorf("max-age=5 over the purged site's defaults: %+v, %v; want its s-maxage kept", p, err)
	}
	if p, _ := parsePolicy(testPolicy.Flag()); p.String() != testPolicyHeader {
		t.Errorf("Cache-Control %q, want %q", p.String(), testPolicyHeader)
	}
	for _, bad := range []string{"max-age=-1", "s-maxage=ten", "private=1", "max-age=1.5s", "no-store"} {
		if _, err := parsePolicy(bad); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

// parsePolicy is DefaultPolicy with the directives s gives.
func parsePolicy(s string) (Policy, error) { return DefaultPolicy.With(s) }

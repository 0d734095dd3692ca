package main

import (
	"net/url"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/ingestworks/ingest/internal/rig/browsertest"
)

// TestDashboardAccessibility runs axe-core (WCAG 2.x A and AA rules) in
// Chromium over every page of the dashboard, signed out and signed in, on
// a desktop (1366x900) and a phone (390x844): no serious or critical
// violation.
func TestDashboardAccessibility(t *testing.T) {
	t.Parallel()
	ctx := browsertest.Tab(t)
	d := startDashboard(t)
	video := d.hostileID(t)
	browsertest.Do(t, ctx, "desktop", chromedp.EmulateViewport(1366, 900))
	check := func(name, path string) {
		t.Helper()
		browsertest.Do(t, ctx, "open "+path, chromedp.Navigate(d.base+path), chromedp.WaitVisible(chromedp.CSS(`main`)))
		if bad := browsertest.Serious(t, ctx); len(bad) > 0 {
			t.Errorf("axe %s: serious or critical violations:\n  %v", name, bad)
		}
	}
	check("sign-in", "/login?next=%2F")
	browsertest.Do(t, ctx, "sign in", chromedp.SendKeys(chromedp.CSS(`input[name=token]`), uiToken),
		chromedp.Submit(chromedp.CSS(`form.login`)), chromedp.WaitVisible(chromedp.CSS(`section.top`)))
	pages := []struct{ name, path string }{
		{"front", "/"},
		{"chart US", "/charts/US"},
		{"worldwide", "/worldwide"},
		{"chart US music", "/charts/US?category=10"},
		{"video", "/videos/" + url.PathEscape(video)},
		{"search hits", "/search?q=prank"},
		{"search, sorted and filtered", "/search?q=prank&category=24&sort=newest&language=en"},
		{"chart US by views gained", "/charts/US?sort=gained"},
		{"operator", "/operator"},
		{"chart before its first run", "/charts/US?category=gaming"},
		{"search", "/search"},
		{"search, no hits", "/search?q=zzyzxnothing"},
		{"search, bad region", "/search?q=prank&region=USA"},
		{"not found", "/no/such/page"},
	}
	for _, p := range pages {
		check(p.name, p.path)
	}
	browsertest.Do(t, ctx, "phone", chromedp.EmulateViewport(390, 844, chromedp.EmulateScale(2)))
	for _, p := range pages {
		check(p.name+" (phone)", p.path)
	}
}

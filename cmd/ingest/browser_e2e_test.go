package main

import (
	"context"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// chromiumPath finds Debian's chromium (scripts/ensure-chromium.sh
// installs it for make test).
func chromiumPath(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Skip("chromium is not installed and could not be: run scripts/ensure-chromium.sh (apt-get install chromium) to run the browser tests")
	return ""
}

// browser starts a headless Chromium of its own, with a fresh profile and
// nothing that reaches the network by itself, and returns a tab.
func browser(t *testing.T) context.Context {
	t.Helper()
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(chromiumPath(t)),
		chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun, chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1280, 900),
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelTab := chromedp.NewContext(actx)
	ctx, cancelTime := context.WithTimeout(ctx, 3*time.Minute)
	t.Cleanup(func() { cancelTime(); cancelTab(); cancelAlloc() })
	return ctx
}

// page runs steps and fails the test with what went wrong.
func page(t *testing.T, ctx context.Context, what string, steps ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	if err := chromedp.Do(ctx, steps...); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

func text(t *testing.T, ctx context.Context, css string) string {
	t.Helper()
	s, err := chromedp.Run(ctx, chromedp.TextContent(chromedp.CSS(css)))
	if err != nil {
		t.Fatalf("text of %s: %v", css, err)
	}
	return strings.TrimSpace(s)
}

func eval[T any](t *testing.T, ctx context.Context, js string) T {
	t.Helper()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](js))
	if err != nil {
		t.Fatalf("evaluate %s: %v", js, err)
	}
	return v
}

func shot(t *testing.T, ctx context.Context, dir, name string) {
	t.Helper()
	capture := chromedp.FullScreenshot(100)
	if strings.HasPrefix(name, "chart") { // 200 rows: the first screen is the picture
		capture = chromedp.CaptureScreenshot()
	}
	png, err := chromedp.Run(ctx, capture)
	if err != nil {
		t.Fatalf("screenshot %s: %v", name, err)
	}
	saveShot(t, dir, name, png)
}

// noScriptRan checks that none of the hostile fixture's markup became
// elements or ran.
func noScriptRan(t *testing.T, ctx context.Context, where string) {
	t.Helper()
	if v := eval[string](t, ctx, `String(window.__xss)`); v != "undefined" {
		t.Errorf("%s: an upstream string ran as script (window.__xss = %s)", where, v)
	}
	if n := eval[int](t, ctx, `document.querySelectorAll('main script, main img, main svg[onload], main b').length`); n != 0 {
		t.Errorf("%s: %d elements came from upstream markup", where, n)
	}
}

// TestDashboardInBrowser signs in, reads the overview, follows a region to
// its chart and a video to its page, searches, and looks at the overview
// on a phone, as a person would; the US chart's top video is titled with
// markup, which must show as text.
func TestDashboardInBrowser(t *testing.T) {
	t.Parallel()
	ctx := browser(t) // skips before anything is run when there is no chromium
	d := startDashboard(t)
	shots := t.TempDir()

	page(t, ctx, "open the dashboard", chromedp.Navigate(d.base+"/"), chromedp.WaitVisible(chromedp.CSS(`form.login`)))
	if h1 := text(t, ctx, "h1"); h1 != "Sign in" {
		t.Fatalf("with a token set, / shows %q, want the sign-in page", h1)
	}
	page(t, ctx, "sign in", chromedp.SendKeys(chromedp.CSS(`input[name=token]`), uiToken),
		chromedp.Submit(chromedp.CSS(`form.login`)), chromedp.WaitVisible(chromedp.CSS(`table.regions`)))

	// Overview: pools with their numbers, both usage charts, each region.
	if h1 := text(t, ctx, "h1"); h1 != "Overview" {
		t.Errorf("after signing in: h1 %q, want Overview", h1)
	}
	pools := text(t, ctx, ".cards")
	for _, want := range []string{"default", "search", "Used", "Remaining", "Free at"} {
		if !strings.Contains(pools, want) {
			t.Errorf("overview pools: no %q in %q", want, pools)
		}
	}
	if n := eval[int](t, ctx, `document.querySelectorAll('figure.chart svg rect').length`); n < 24+30 {
		t.Errorf("overview: %d bars, want a 24-hour and a 30-day chart", n)
	}
	regionsText := text(t, ctx, "table.regions tbody")
	for _, want := range []string{"US", "GB", "US · music", "GB · music", "completed"} {
		if !strings.Contains(regionsText, want) {
			t.Errorf("overview regions: no %q in %q", want, regionsText)
		}
	}
	shot(t, ctx, shots, "overview.png")

	// Region chart, reached by clicking.
	page(t, ctx, "open the US chart", chromedp.Click(chromedp.CSS(`table.regions a[href="/charts/US"]`)),
		chromedp.WaitVisible(chromedp.CSS(`table.chart-table`)))
	if h1 := text(t, ctx, "h1"); h1 != "US trending chart" {
		t.Errorf("chart page h1 %q", h1)
	}
	if got := text(t, ctx, `table.chart-table tbody tr:first-child td.video a`); got != hostileTitle {
		t.Errorf("chart: the top title shows as %q, want the text %q", got, hostileTitle)
	}
	if n := eval[int](t, ctx, `document.querySelectorAll('svg.spark polyline').length`); n == 0 {
		t.Errorf("chart: no sparklines after two runs")
	}
	if n := eval[int](t, ctx, `document.querySelectorAll('td.move span').length`); n == 0 {
		t.Errorf("chart: no movement marks after two runs")
	}
	noScriptRan(t, ctx, "chart page")
	shot(t, ctx, shots, "chart-US.png")

	// The hostile video's page.
	page(t, ctx, "open the video", chromedp.Click(chromedp.CSS(`table.chart-table tbody tr:first-child td.video a`)),
		chromedp.WaitVisible(chromedp.CSS(`h1.video-title`)))
	if got := text(t, ctx, "h1.video-title"); got != hostileTitle {
		t.Errorf("video page title %q, want %q", got, hostileTitle)
	}
	if got := text(t, ctx, ".channel"); got != "<b>Bold</b> Channel" {
		t.Errorf("video page channel %q, want the markup as text", got)
	}
	if got := text(t, ctx, "table.ranks tbody"); !strings.Contains(got, "US") {
		t.Errorf("video page: rank per region %q has no US", got)
	}
	if n := eval[int](t, ctx, `document.querySelectorAll('figure.chart polyline').length`); n < 3 {
		t.Errorf("video page: %d chart lines, want rank, views in charts and views read by tracking", n)
	}
	if got := text(t, ctx, "body"); !strings.Contains(got, "views, charts and tracking") {
		t.Errorf("video page: no line of the views read by tracking in %q", got)
	}
	noScriptRan(t, ctx, "video page")
	shot(t, ctx, shots, "video.png")

	// Search from the header, with highlighted snippets.
	page(t, ctx, "search", chromedp.SendKeys(chromedp.CSS(`header input[name=q]`), "prank\n"),
		chromedp.WaitVisible(chromedp.CSS(`ol.hits`)))
	if got := text(t, ctx, "ol.hits li:first-child .hit-title"); got != hostileTitle {
		t.Errorf("search: first hit %q, want %q", got, hostileTitle)
	}
	if got := text(t, ctx, "ol.hits li:first-child mark"); !strings.EqualFold(got, "prank") {
		t.Errorf("search: highlighted %q, want Prank", got)
	}
	noScriptRan(t, ctx, "search page")
	shot(t, ctx, shots, "search.png")

	// The music chart, reached from the overview's row of its own.
	page(t, ctx, "open the US music chart", chromedp.Navigate(d.base+"/"),
		chromedp.Click(chromedp.CSS(`table.regions a[href="/charts/US?category=10"]`)),
		chromedp.WaitVisible(chromedp.CSS(`table.chart-table`)))
	if h1 := text(t, ctx, "h1"); h1 != "US · music trending chart" {
		t.Errorf("music chart page h1 %q", h1)
	}
	if n := eval[int](t, ctx, `document.querySelectorAll('td.move span').length`); n == 0 {
		t.Errorf("music chart: no movement marks after two runs")
	}
	if got := eval[string](t, ctx, `document.querySelector('form.inline input[name=category]').value`); got != "10" {
		t.Errorf("music chart: the form to see an older chart asks for category %q, want 10", got)
	}
	shot(t, ctx, shots, "chart-US-music.png")

	// On a phone: nothing wider than the screen but the scrolling tables.
	page(t, ctx, "phone", chromedp.EmulateViewport(390, 844, chromedp.EmulateScale(2)),
		chromedp.Navigate(d.base+"/"), chromedp.WaitVisible(chromedp.CSS(`table.regions`)))
	if over := eval[bool](t, ctx, `document.documentElement.scrollWidth > window.innerWidth + 1`); over {
		t.Errorf("phone: the overview is wider than the screen")
	}
	shot(t, ctx, shots, "overview-phone.png")
}

package main

import (
	"context"
	"regexp"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/ingestworks/ingest/internal/rig/browsertest"
)

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
	if v := browsertest.Eval[string](t, ctx, `String(window.__xss)`); v != "undefined" {
		t.Errorf("%s: an upstream string ran as script (window.__xss = %s)", where, v)
	}
	if n := browsertest.Eval[int](t, ctx, `document.querySelectorAll('main script, main img:not([src^="https://i.ytimg.com/"]), main svg[onload], main b').length`); n != 0 {
		t.Errorf("%s: %d elements came from upstream markup", where, n)
	}
}

// TestDashboardInBrowser signs in, reads the overview, follows a region to
// its chart and a video to its page, searches, and looks at the overview
// on a phone, as a person would; the US chart's top video is titled with
// markup, which must show as text.
func TestDashboardInBrowser(t *testing.T) {
	t.Parallel()
	ctx := browsertest.Tab(t) // skips before anything is run when there is no chromium
	d := startDashboard(t)
	shots := t.TempDir()

	// A page asked for without a session: the sign-in, then that page.
	browsertest.Do(t, ctx, "open a chart", chromedp.Navigate(d.base+"/charts/GB"), chromedp.WaitVisible(chromedp.CSS(`form.login`)))
	if h1 := browsertest.Text(t, ctx, "h1"); h1 != "Sign in" {
		t.Fatalf("with a token set, /charts/GB shows %q, want the sign-in page", h1)
	}
	browsertest.Do(t, ctx, "sign in", chromedp.SendKeys(chromedp.CSS(`input[name=token]`), uiToken),
		chromedp.Submit(chromedp.CSS(`form.login`)), chromedp.WaitVisible(chromedp.CSS(`table.chart-table`)))
	if got := browsertest.Eval[string](t, ctx, `location.pathname`); got != "/charts/GB" {
		t.Errorf("after signing in: at %s, want back at /charts/GB", got)
	}
	if n := browsertest.Eval[int](t, ctx, `document.cookie.length`); n != 0 {
		t.Errorf("the session cookie can be read by script (document.cookie has %d characters)", n)
	}
	// The front page: the browser's region's top 10 (Chromium asks for
	// en-US), with what a reader needs, and every other region a tap away.
	browsertest.Do(t, ctx, "desktop", chromedp.EmulateViewport(1366, 900))
	browsertest.Do(t, ctx, "open the front page", chromedp.Navigate(d.base+"/"), chromedp.WaitVisible(chromedp.CSS(`section.top`)))
	if got := browsertest.Eval[string](t, ctx, `[...document.querySelectorAll('section.top')].map(s =>
		s.querySelector('h2 a').textContent + ':' + s.querySelectorAll('li.entry').length).join(' ')`); got != "United States:10" {
		t.Errorf("front page: regions and their videos %q, want US's top 10", got)
	}
	if got := browsertest.Eval[string](t, ctx, `[...document.querySelectorAll('nav.regions a')].map(a => a.textContent).join(' ')`); got != "United States United Kingdom" {
		t.Errorf("front page: the regions listed are %q, want the Americas' then Europe's", got)
	}
	if got := browsertest.Eval[string](t, ctx, `(() => { const li = document.querySelector('#top-US ~ ol li.entry');
		return [!!li.querySelector('img[src^="https://i.ytimg.com/"]'), !!li.querySelector('a.title'), !!li.querySelector('a.channel[href^="https://www.youtube.com/channel/"]'),
		/^[0-9.]+[KMB]? views$/.test(li.querySelector('.views').textContent), /views at /.test(li.querySelector('.views').title), /^uploaded [A-Z][a-z]{2} \d{1,2}, \d{4}$/.test(li.querySelector('.age').textContent)].join(' '); })()`); got != "true true true true true true" {
		t.Errorf("front page: the US #1 has thumbnail, title, channel link, short views, their time, age: %s", got)
	}
	if got := browsertest.Text(t, ctx, "section.top p.meta"); !strings.Contains(got, "Views at ") {
		t.Errorf("front page: the region's views carry no time: %q", got)
	}
	shot(t, ctx, shots, "front.png")
	browsertest.Do(t, ctx, "open the operator's page", chromedp.Click(chromedp.CSS(`header a[href="/operator"]`)), chromedp.WaitVisible(chromedp.CSS(`table.regions`)))

	// The operator's page: pools with their numbers, both usage charts, each region.
	if h1 := browsertest.Text(t, ctx, "h1"); h1 != "Operator" {
		t.Errorf("the operator's page: h1 %q, want Operator", h1)
	}
	pools := browsertest.Text(t, ctx, ".cards")
	for _, want := range []string{"default", "search", "Used", "Remaining", "Free at"} {
		if !strings.Contains(pools, want) {
			t.Errorf("overview pools: no %q in %q", want, pools)
		}
	}
	if n := browsertest.Eval[int](t, ctx, `document.querySelectorAll('figure.chart svg rect').length`); n < 24+30 {
		t.Errorf("overview: %d bars, want a 24-hour and a 30-day chart", n)
	}
	// The cards fill their row: the last one ends where the row does.
	if gap := browsertest.Eval[float64](t, ctx, `(() => { const row = document.querySelector('.cards').getBoundingClientRect();
		const cards = [...document.querySelectorAll('.cards .card')];
		return row.right - Math.max(...cards.map(c => c.getBoundingClientRect().right)); })()`); gap > 2 {
		t.Errorf("overview: the pool cards leave %.0fpx of their row empty", gap)
	}
	usage := browsertest.Text(t, ctx, "section:nth-of-type(2)")
	for _, want := range []string{"no search calls in 24 hours", "no search calls in 30 days"} {
		if !strings.Contains(usage, want) {
			t.Errorf("overview usage: no quiet line %q in %q", want, usage)
		}
	}
	regionsText := browsertest.Text(t, ctx, "table.regions tbody")
	for _, want := range []string{"US", "GB", "US · music", "GB · music", "completed"} {
		if !strings.Contains(regionsText, want) {
			t.Errorf("overview regions: no %q in %q", want, regionsText)
		}
	}
	shot(t, ctx, shots, "overview.png")

	// Region chart, reached by clicking.
	browsertest.Do(t, ctx, "open the US chart", chromedp.Click(chromedp.CSS(`table.regions a[href="/charts/US"]`)),
		chromedp.WaitVisible(chromedp.CSS(`table.chart-table`)))
	if h1 := browsertest.Text(t, ctx, "h1"); h1 != "United States trending chart" {
		t.Errorf("chart page h1 %q", h1)
	}
	if got := browsertest.Text(t, ctx, `table.chart-table tbody tr:first-child td.video a`); got != hostileTitle {
		t.Errorf("chart: the top title shows as %q, want the text %q", got, hostileTitle)
	}
	if n := browsertest.Eval[int](t, ctx, `document.querySelectorAll('svg.spark polyline').length`); n == 0 {
		t.Errorf("chart: no sparklines after two runs")
	}
	if n := browsertest.Eval[int](t, ctx, `document.querySelectorAll('td.rank span.mv, td.move span').length`); n == 0 {
		t.Errorf("chart: no movement marks after two runs")
	}
	if got := browsertest.Eval[string](t, ctx, `(() => { const i = document.querySelector('td.thumb img');
		return i ? [i.src.startsWith('https://i.ytimg.com/'), i.loading, i.width, i.height].join(' ') : 'none'; })()`); got != "true lazy 96 54" {
		t.Errorf("chart: first thumbnail %q, want one from i.ytimg.com, lazy, 96x54 (16:9)", got)
	}
	for css, want := range map[string]string{"td.peak": "#", "td.days": "1"} {
		if got := browsertest.Text(t, ctx, "table.chart-table tbody tr:first-child "+css); !strings.HasPrefix(got, want) {
			t.Errorf("chart: %s is %q, want %q...", css, got, want)
		}
	}
	if got := browsertest.Eval[string](t, ctx, `(() => { const a = document.querySelector('table.chart-table tbody tr:first-child a.yt'), r = a.getBoundingClientRect();
		return [a.href.startsWith('https://www.youtube.com/watch?v='), r.width >= 24 && r.height >= 24, a.textContent.endsWith(' on YouTube')].join(' '); })()`); got != "true true true" {
		t.Errorf("chart: the YouTube link (on YouTube, at least 24 px, named): %s", got)
	}
	if got := browsertest.Eval[string](t, ctx, `document.querySelector('input[name=at]').type`); got != "datetime-local" {
		t.Errorf("chart: the time picker is an input of type %q, want datetime-local", got)
	}
	if got := browsertest.Eval[string](t, ctx, `[...document.querySelectorAll('form.pick select[name=region] option')].map(o => o.value).join(' ')`); got != "US GB" {
		t.Errorf("chart: the region picker offers %q", got)
	}
	browsertest.Do(t, ctx, "pick GB's music chart", chromedp.SetValue(chromedp.CSS(`form.pick select[name=region]`), "GB"),
		chromedp.SetValue(chromedp.CSS(`form.pick select[name=category]`), "10"), chromedp.Submit(chromedp.CSS(`form.pick`)),
		chromedp.WaitVisible(chromedp.CSS(`table.chart-table`)))
	if h1 := browsertest.Text(t, ctx, "h1"); h1 != "United Kingdom · music trending chart" {
		t.Errorf("the picker's GB music: h1 %q", h1)
	}
	browsertest.Do(t, ctx, "back to the US chart", chromedp.Navigate(d.base+"/charts/US"), chromedp.WaitVisible(chromedp.CSS(`table.chart-table`)))
	if open := browsertest.Eval[bool](t, ctx, `document.querySelector('details.runs').open || document.querySelector('a.prev').checkVisibility()`); open {
		t.Errorf("chart: the earlier runs are shown before they are asked for")
	}
	browsertest.Do(t, ctx, "previous run", chromedp.Click(chromedp.CSS(`details.runs summary`)), chromedp.Click(chromedp.CSS(`a.prev`)),
		chromedp.WaitVisible(chromedp.CSS(`table.chart-table`)), chromedp.Click(chromedp.CSS(`details.runs summary`)), chromedp.WaitVisible(chromedp.CSS(`a.next`)))
	if got := browsertest.Text(t, ctx, "nav.steps"); !strings.Contains(got, "No earlier run") {
		t.Errorf("chart: the previous run's steps say %q, want no earlier run", got)
	}
	browsertest.Do(t, ctx, "next run", chromedp.Click(chromedp.CSS(`a.next`)), chromedp.WaitVisible(chromedp.CSS(`table.chart-table`)),
		chromedp.Click(chromedp.CSS(`details.runs summary`)), chromedp.WaitVisible(chromedp.CSS(`a.prev`)))
	noScriptRan(t, ctx, "chart page")
	shot(t, ctx, shots, "chart-US.png")

	// The hostile video's page.
	browsertest.Do(t, ctx, "open the video", chromedp.Click(chromedp.CSS(`table.chart-table tbody tr:first-child td.video a`)),
		chromedp.WaitVisible(chromedp.CSS(`h1.video-title`)))
	if got := browsertest.Text(t, ctx, "h1.video-title"); got != hostileTitle {
		t.Errorf("video page title %q, want %q", got, hostileTitle)
	}
	if got := browsertest.Text(t, ctx, ".channel"); got != "<b>Bold</b> Channel" {
		t.Errorf("video page channel %q, want the markup as text", got)
	}
	if got := browsertest.Text(t, ctx, "table.ranks tbody"); !strings.Contains(got, "United States") {
		t.Errorf("video page: rank per region %q has no United States", got)
	}
	if n := browsertest.Eval[int](t, ctx, `document.querySelectorAll('figure.chart polyline').length`); n < 3 {
		t.Errorf("video page: %d chart lines, want rank, views in charts and views read by tracking", n)
	}
	if got := browsertest.Text(t, ctx, "body"); !strings.Contains(got, "views, charts and tracking") {
		t.Errorf("video page: no line of the views read by tracking in %q", got)
	}
	if got := browsertest.Text(t, ctx, ".duration"); !regexp.MustCompile(`^\d+:\d\d$`).MatchString(got) {
		t.Errorf("video page: duration %q, want m:ss", got)
	}
	if got := browsertest.Eval[string](t, ctx, `document.querySelector('a.youtube').href`); !strings.HasPrefix(got, "https://www.youtube.com/watch?v=") {
		t.Errorf("video page: YouTube link %q", got)
	}
	axes := browsertest.Eval[string](t, ctx, `[...document.querySelectorAll('.axis-label')].map(e => e.textContent).join('|')`)
	if axes != "rank (#1 at the top)|time (UTC)|views|time (UTC)" {
		t.Errorf("video page: axis labels %q", axes)
	}
	// The two views lines differ in dash, not only in colour.
	if got := browsertest.Eval[string](t, ctx, `[...document.querySelectorAll('figure.line-chart')].pop().querySelectorAll('polyline').length > 1 ?
		[...[...document.querySelectorAll('figure.line-chart')].pop().querySelectorAll('polyline')].map(p => p.parentNode.getAttribute('class') + ':' + getComputedStyle(p).strokeDasharray).join('|') : ''`); !strings.Contains(got, "|") || strings.Split(strings.Split(got, "|")[0], ":")[1] == strings.Split(strings.Split(got, "|")[1], ":")[1] {
		t.Errorf("video page: the views lines' dashes %q, want two different ones", got)
	}
	if n := browsertest.Eval[int](t, ctx, `document.querySelectorAll('figure.line-chart circle > title').length`); n == 0 {
		t.Errorf("video page: no hover titles on the points")
	}
	noScriptRan(t, ctx, "video page")
	shot(t, ctx, shots, "video.png")

	// Search from the header, with highlighted snippets.
	browsertest.Do(t, ctx, "search", chromedp.SendKeys(chromedp.CSS(`header input[name=q]`), "prank\n"),
		chromedp.WaitVisible(chromedp.CSS(`ol.hits`)))
	if got := browsertest.Text(t, ctx, "ol.hits li:first-child .hit-title"); got != hostileTitle {
		t.Errorf("search: first hit %q, want %q", got, hostileTitle)
	}
	if got := browsertest.Text(t, ctx, "ol.hits li:first-child mark"); !strings.EqualFold(got, "prank") {
		t.Errorf("search: highlighted %q, want Prank", got)
	}
	if got := browsertest.Text(t, ctx, "p.count"); !regexp.MustCompile(`^\d+ hits? for “prank”`).MatchString(got) {
		t.Errorf("search: count %q", got)
	}
	// Every input is as wide as its placeholder.
	if got := browsertest.Eval[string](t, ctx, `(() => { const c = document.createElement('canvas').getContext('2d'); const bad = [];
		for (const i of document.querySelectorAll('main input[placeholder]')) { const s = getComputedStyle(i); c.font = s.font;
		  const room = i.clientWidth - parseFloat(s.paddingLeft) - parseFloat(s.paddingRight);
		  if (c.measureText(i.placeholder).width > room) bad.push(i.name); } return bad.join(' '); })()`); got != "" {
		t.Errorf("search: the placeholder of %s is clipped", got)
	}
	noScriptRan(t, ctx, "search page")
	shot(t, ctx, shots, "search.png")
	browsertest.Do(t, ctx, "search for many", chromedp.Navigate(d.base+"/search?q=burger"), chromedp.WaitVisible(chromedp.CSS(`ol.hits`)))
	shot(t, ctx, shots, "search-many.png")
	browsertest.Do(t, ctx, "search for nothing", chromedp.Navigate(d.base+"/search?q=zzyzxnothing"), chromedp.WaitVisible(chromedp.CSS(`p.empty`)))
	if n := browsertest.Eval[int](t, ctx, `document.querySelectorAll('main ol, main li').length`); n != 0 {
		t.Errorf("search for nothing: %d list elements, want a plain sentence", n)
	}

	// The music chart, reached from the overview's row of its own.
	browsertest.Do(t, ctx, "open the US music chart", chromedp.Navigate(d.base+"/operator"),
		chromedp.Click(chromedp.CSS(`table.regions a[href="/charts/US?category=10"]`)),
		chromedp.WaitVisible(chromedp.CSS(`table.chart-table`)))
	if h1 := browsertest.Text(t, ctx, "h1"); h1 != "United States · music trending chart" {
		t.Errorf("music chart page h1 %q", h1)
	}
	if n := browsertest.Eval[int](t, ctx, `document.querySelectorAll('td.rank span.mv, td.move span').length`); n == 0 {
		t.Errorf("music chart: no movement marks after two runs")
	}
	if got := browsertest.Eval[string](t, ctx, `document.querySelector('form.inline input[name=category]').value`); got != "10" {
		t.Errorf("music chart: the form to see an older chart asks for category %q, want 10", got)
	}
	shot(t, ctx, shots, "chart-US-music.png")

	// On a phone: nothing wider than the screen but the scrolling tables.
	browsertest.Do(t, ctx, "phone", chromedp.EmulateViewport(390, 844, chromedp.EmulateScale(2)),
		chromedp.Navigate(d.base+"/operator"), chromedp.WaitVisible(chromedp.CSS(`table.regions`)))
	if over := browsertest.Eval[bool](t, ctx, `document.documentElement.scrollWidth > window.innerWidth + 1`); over {
		t.Errorf("phone: the overview is wider than the screen")
	}
	shot(t, ctx, shots, "overview-phone.png")

	// Sign out: back to the sign-in, and the pages ask for it again.
	browsertest.Do(t, ctx, "sign out", chromedp.Click(chromedp.CSS(`form.signout button`)), chromedp.WaitVisible(chromedp.CSS(`.signed-out`)))
	browsertest.Do(t, ctx, "after signing out", chromedp.Navigate(d.base+"/"), chromedp.WaitVisible(chromedp.CSS(`form.login`)))
}

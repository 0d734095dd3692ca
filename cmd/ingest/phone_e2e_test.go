package main

import (
	"net/url"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/ingestworks/ingest/internal/rig/browsertest"
)

// TestPhoneInBrowser looks at the chart and a video's page on a phone
// (390x844): the chart table fits the screen, with no sideways scrolling,
// and shows each title whole; the video page's time axis names each tick
// once, and no two of the labels it shows overlap. On every page nothing
// scrolls sideways and every tap target is at least 24 px; the chart's
// first row is within the first screen.
func TestPhoneInBrowser(t *testing.T) {
	t.Parallel()
	ctx := browsertest.Tab(t) // skips before anything is run when there is no chromium
	d := startDashboard(t)
	browsertest.Do(t, ctx, "sign in on a phone", chromedp.EmulateViewport(390, 844, chromedp.EmulateScale(2)),
		chromedp.Navigate(d.base+"/charts/US"), chromedp.WaitVisible(chromedp.CSS(`form.login`)),
		chromedp.SendKeys(chromedp.CSS(`input[name=token]`), uiToken),
		chromedp.Submit(chromedp.CSS(`form.login`)), chromedp.WaitVisible(chromedp.CSS(`table.chart-table`)))
	if over := browsertest.Eval[float64](t, ctx, `(() => { const s = document.querySelector('table.chart-table').parentElement;
		return Math.max(s.scrollWidth - s.clientWidth, document.documentElement.scrollWidth - window.innerWidth); })()`); over > 1 {
		t.Errorf("phone chart: the table is %.0fpx wider than the screen: it scrolls sideways", over)
	}
	if cut := browsertest.Eval[string](t, ctx, `[...document.querySelectorAll('table.chart-table td.video a:first-child')].filter(a => {
		const r = a.getBoundingClientRect(); return r.right > window.innerWidth + 1 || r.left < -1 || a.scrollWidth > a.clientWidth + 1;
		}).slice(0, 3).map(a => a.textContent).join(' | ')`); cut != "" {
		t.Errorf("phone chart: titles cut by the screen's edge, the first: %s", cut)
	}
	shot(t, ctx, t.TempDir(), "chart-phone.png")

	browsertest.Do(t, ctx, "open a video on a phone", chromedp.Click(chromedp.CSS(`table.chart-table tbody tr:first-child td.video a`)),
		chromedp.WaitVisible(chromedp.CSS(`h1.video-title`)))
	axes := browsertest.Eval[[]string](t, ctx, `[...document.querySelectorAll('figure.line-chart')].map(f =>
		[...f.querySelectorAll('g.ticks.x text')].filter(e => getComputedStyle(e).display !== 'none').map(e => e.textContent).join('|'))`)
	if len(axes) == 0 {
		t.Fatal("phone video page: no time axis")
	}
	for _, axis := range axes {
		labels := strings.Split(axis, "|")
		seen := map[string]bool{}
		for _, l := range labels {
			if seen[l] {
				t.Errorf("phone video page: the time axis names %q twice: %q", l, labels)
			}
			seen[l] = true
		}
	}
	if n := browsertest.Eval[int](t, ctx, `[...document.querySelectorAll('figure.line-chart')].map(f => {
		const r = [...f.querySelectorAll('g.ticks.x text')].filter(e => getComputedStyle(e).display !== 'none').map(e => e.getBoundingClientRect());
		let n = 0; for (let i = 1; i < r.length; i++) if (r[i].left < r[i-1].right) n++; return n; }).reduce((a, b) => a + b, 0)`); n != 0 {
		t.Errorf("phone video page: %d time labels overlap the one before", n)
	}
	shot(t, ctx, t.TempDir(), "video-phone.png")

	// Every page: nothing scrolls sideways, and every tap target but a
	// link inside a sentence is at least 24 px each way.
	video := d.hostileID(t)
	for _, p := range []string{"/", "/charts/US", "/charts/US?category=10", "/charts/US?sort=gained", "/videos/" + url.PathEscape(video),
		"/search?q=prank", "/search?q=burger&category=24&sort=views", "/operator", "/charts/US?category=gaming"} {
		browsertest.Do(t, ctx, "open "+p+" on a phone", chromedp.Navigate(d.base+p), chromedp.WaitVisible(chromedp.CSS(`main`)))
		if over := browsertest.Eval[float64](t, ctx, `document.documentElement.scrollWidth - window.innerWidth`); over > 1 {
			t.Errorf("phone %s: the page is %.0fpx wider than the screen", p, over)
		}
		// Nor does a table scroll inside the page: only the language tabs' row may.
		if wide := browsertest.Eval[string](t, ctx, `[...document.querySelectorAll('main *')].filter(e => !e.closest('nav.langs') &&
			e.scrollWidth > e.clientWidth + 1 && ['auto', 'scroll'].includes(getComputedStyle(e).overflowX)).map(e => e.tagName.toLowerCase() + '.' + e.className + ' ' + (e.scrollWidth - e.clientWidth) + 'px').join(', ')`); wide != "" {
			t.Errorf("phone %s: scrolls sideways inside the page: %s", p, wide)
		}
		if small := browsertest.Eval[string](t, ctx, smallTargets); small != "" {
			t.Errorf("phone %s: tap targets under 24 px: %s", p, small)
		}
	}

	// The chart's first row starts within the first screen, and so does
	// the front page's first video.
	for p, row := range map[string]string{"/charts/US": "table.chart-table tbody tr", "/charts/US?category=10": "table.chart-table tbody tr", "/": "li.entry"} {
		browsertest.Do(t, ctx, "open "+p+" on a phone", chromedp.Navigate(d.base+p), chromedp.WaitVisible(chromedp.CSS(row)))
		top := browsertest.Eval[float64](t, ctx, `document.querySelector('`+row+`').getBoundingClientRect().top`)
		t.Logf("phone %s: the first row starts %.0f px from the top", p, top)
		if top+60 > 844 {
			t.Errorf("phone %s: the first row starts at %.0f px, not within the first screen (844 px)", p, top)
		}
	}
}

// smallTargets lists the visible links, buttons, fields and summaries
// smaller than 24 px either way, but links inside a sentence (WCAG 2.5.8's
// inline exception): the first five, as tag.class WxH.
const smallTargets = `[...document.querySelectorAll('a, button, select, input:not([type=hidden]), summary')].filter(e => {
	if (e.offsetParent === null && getComputedStyle(e).position !== 'fixed') return false;
	if (e.tagName === 'A' && e.closest('p:not(.more):not(.watch), dd, li.pace, figcaption, .description')) return false;
	const r = e.getBoundingClientRect(); return r.width < 24 || r.height < 24;
}).slice(0, 5).map(e => { const r = e.getBoundingClientRect(); return e.tagName.toLowerCase() + '.' + e.className + ' ' + Math.round(r.width) + 'x' + Math.round(r.height) + ' ' + e.textContent.slice(0, 20); }).join(', ')`

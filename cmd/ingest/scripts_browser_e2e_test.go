package main

import (
	"context"
	"fmt"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/css"
	"github.com/chromedp/chromedp"

	"github.com/ingestworks/ingest/internal/rig/browsertest"
)

// TestScriptsInBrowser: `ingest serve` over the fake upstream's Japanese,
// Korean and Arabic charts, in Chromium with Debian's Noto fonts
// (scripts/ensure-chromium.sh), on a phone (390x844) and a desktop
// (1280x900). A Japanese title is drawn with a Japanese font and a Korean
// one with a Korean font, told by the title's own lang on a page whose
// words are English; an Arabic title runs right to left by its markup
// (dir="auto"), the page's own words left to right. On the phone no row's fact is cut or
// broken, the chart's pickers and its Show button share one line, and the
// video's duration is labelled. The front page (leading with Japan), the
// JP chart and the Arabic video are saved as lang-*.png (into
// INGEST_SCREENSHOTS when set: docs/img).
func TestScriptsInBrowser(t *testing.T) {
	t.Parallel()
	ctx := browsertest.Tab(t)
	h := newHarness(t)
	h.fake.SetChartShape(20, 50)
	h.mustRun(0, "run", "--once", "--regions", "JP,KR,SA,US")
	base := startServe(t, h, "--public-url", publicSite)
	var arabic string
	for _, v := range h.fake.Chart("SA")[:20] {
		if regexp.MustCompile(`^\P{Latin}*\p{Arabic}`).MatchString(v.Title) {
			arabic = v.ID
			break
		}
	}
	if arabic == "" {
		t.Fatal("no title of the SA chart's top 20 starts in Arabic")
	}
	dir := t.TempDir()
	for _, sc := range []struct {
		name string
		w, h int64
	}{{"phone", 390, 844}, {"desktop", 1280, 900}} {
		browsertest.Do(t, ctx, sc.name, chromedp.EmulateViewport(sc.w, sc.h))
		browsertest.Do(t, ctx, "lead with Japan", chromedp.Navigate(base+"/?region=JP"), chromedp.WaitVisible(chromedp.CSS(`section.top`)))
		langShot(t, ctx, dir, "lang-front-"+sc.name+".png")

		browsertest.Do(t, ctx, "the JP chart", chromedp.Navigate(base+"/charts/JP"), chromedp.WaitVisible(chromedp.CSS(`table.chart-table`)))
		if got := browsertest.Eval[string](t, ctx, `document.documentElement.lang`); got != "en" {
			t.Errorf("%s: the page's language is %q, want en", sc.name, got)
		}
		if n := browsertest.Eval[int](t, ctx, `document.querySelectorAll('a.title[lang="ja"]').length`); n == 0 {
			t.Fatalf("%s: no title of the JP chart says lang=\"ja\"", sc.name)
		}
		if f := fontOf(t, ctx, `a.title[lang="ja"]`); !strings.Contains(f, "JP") {
			t.Errorf("%s: the first Japanese title is drawn in %q, want a Japanese font (Noto … CJK JP)", sc.name, f)
		}
		langShot(t, ctx, dir, "lang-chart-jp-"+sc.name+".png")
		if sc.name == "phone" {
			phoneFacts(t, ctx, "the JP chart")
		}
		// The same words told Chinese are drawn in a Chinese font: the
		// font follows the markup, not the browser's own guess.
		browsertest.Eval[bool](t, ctx, `(() => { const p = document.createElement('span'); p.id = 'probe'; p.lang = 'zh-Hans';
			p.textContent = document.querySelector('a.title[lang="ja"]').textContent; document.querySelector('main').append(p);
			return p.getBoundingClientRect().width > 0; })()`)
		if f := fontOf(t, ctx, `#probe`); !strings.Contains(f, "SC") {
			t.Errorf("%s: the Japanese title's words told Chinese are drawn in %q, want a Chinese font (Noto … CJK SC)", sc.name, f)
		}

		browsertest.Do(t, ctx, "the KR chart", chromedp.Navigate(base+"/charts/KR"), chromedp.WaitVisible(chromedp.CSS(`table.chart-table`)))
		if n := browsertest.Eval[int](t, ctx, `document.querySelectorAll('a.title[lang="ko"]').length`); n == 0 {
			t.Fatalf("%s: no title of the KR chart says lang=\"ko\"", sc.name)
		}
		if f := fontOf(t, ctx, `a.title[lang="ko"]`); !strings.Contains(f, "KR") {
			t.Errorf("%s: the first Korean title is drawn in %q, want a Korean font (Noto … CJK KR)", sc.name, f)
		}

		browsertest.Do(t, ctx, "the Arabic video", chromedp.Navigate(base+"/videos/"+url.PathEscape(arabic)), chromedp.WaitVisible(chromedp.CSS(`h1.video-title`)))
		if d := browsertest.Eval[string](t, ctx, `getComputedStyle(document.querySelector('h1.video-title')).direction`); d != "rtl" {
			t.Errorf("%s: the Arabic title runs %s, want rtl", sc.name, d)
		}
		if d := browsertest.Eval[string](t, ctx, `getComputedStyle(document.querySelector('main > p.muted')).direction`); d != "ltr" {
			t.Errorf("%s: the page's own words run %s, want ltr", sc.name, d)
		}
		t.Logf("%s: the Arabic title is drawn in %s", sc.name, fontOf(t, ctx, `h1.video-title`))
		if line := browsertest.Text(t, ctx, `main > p.muted`); !regexp.MustCompile(`duration \d+:\d\d`).MatchString(line) {
			t.Errorf("%s: the video's line %q does not label its duration", sc.name, line)
		}
		langShot(t, ctx, dir, "lang-video-arabic-"+sc.name+".png")
	}
}

// langShot saves the first screen as name, after axe-core finds no
// serious or critical violation on the page (its lang attributes among
// them).
func langShot(t *testing.T, ctx context.Context, dir, name string) {
	t.Helper()
	if bad := browsertest.Serious(t, ctx); len(bad) > 0 {
		t.Errorf("axe %s: serious or critical violations:\n  %v", name, bad)
	}
	png, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
	if err != nil {
		t.Fatalf("screenshot %s: %v", name, err)
	}
	saveShot(t, dir, name, png)
}

// fontOf is the fonts Chromium drew the first element sel matches with,
// as the platform names them, comma-separated.
func fontOf(t *testing.T, ctx context.Context, sel string) string {
	t.Helper()
	fonts, err := chromedp.Run(ctx, chromedp.QueryAfter(chromedp.CSS(sel), func(ctx context.Context, tg *chromedp.Target, nodes []*chromedp.Node) ([]*css.PlatformFontUsage, error) {
		if len(nodes) == 0 {
			return nil, fmt.Errorf("no %s on the page", sel)
		}
		if _, err := cdp.Call(ctx, tg, css.Enable, cdp.Empty{}); err != nil {
			return nil, err
		}
		res, err := cdp.Call(ctx, tg, css.GetPlatformFontsForNode, css.GetPlatformFontsForNodeParams{NodeID: nodes[0].NodeID})
		if err != nil {
			return nil, err
		}
		return res.Fonts, nil
	}))
	if err != nil {
		t.Fatalf("the fonts of %s: %v", sel, err)
	}
	var names []string
	for _, f := range fonts {
		names = append(names, fmt.Sprintf("%s (%d glyphs)", f.FamilyName, int(f.GlyphCount)))
	}
	return strings.Join(names, ", ")
}

// phoneFacts checks a chart on a phone: each fact of a row's line (its
// views, its upload age) whole on one line, none cut at the cell's edge;
// the pickers and the Show button on one line. The first row is given the
// longest facts a row shows ("999.9M views", "uploaded Sep 30, 2026")
// and the category picker, when the region has one, the longest of
// YouTube's category names, as the charts that cut them had.
func phoneFacts(t *testing.T, ctx context.Context, page string) {
	t.Helper()
	got := browsertest.Eval[struct {
		Facts, Broken, Cut int
		Controls           []float64
		Examples           []string
	}](t, ctx, `(() => {
		const first = document.querySelector('.chart-table tbody tr .stats');
		first.querySelector('.views-inline').textContent = '999.9M views';
		first.querySelector('.age').textContent = 'uploaded Sep 30, 2026';
		const o = document.createElement('option');
		o.textContent = 'Nonprofits & Activism';
		const cat = document.querySelector('form.pick select[name=category]'); // none for a region of one chart
		if (cat) cat.append(o);
		const out = {Facts: 0, Broken: 0, Cut: 0, Controls: [], Examples: []};
		for (const s of document.querySelectorAll('.chart-table .by .stats > span')) {
			if (getComputedStyle(s).display === 'none' || !s.textContent.trim()) continue;
			out.Facts++;
			const cell = s.closest('td').getBoundingClientRect(), r = s.getBoundingClientRect();
			// A fact of text and a <time> is two boxes on one line: broken is on two lines.
			if (new Set([...s.getClientRects()].map(q => Math.round(q.top))).size > 1) { out.Broken++; out.Examples.push('broken: ' + s.textContent); }
			if (r.right > cell.right + 1) { out.Cut++; out.Examples.push('cut: ' + s.textContent); }
		}
		for (const c of document.querySelectorAll('form.pick select, form.pick button')) {
			const r = c.getBoundingClientRect();
			out.Controls.push(r.top + r.height / 2);
		}
		return out;
	})()`)
	if got.Facts == 0 || got.Broken > 0 || got.Cut > 0 {
		t.Errorf("%s on a phone: of %d facts, %d broken over lines and %d cut: %q", page, got.Facts, got.Broken, got.Cut, got.Examples)
	}
	for _, mid := range got.Controls {
		if len(got.Controls) < 2 || mid < got.Controls[0]-2 || mid > got.Controls[0]+2 {
			t.Errorf("%s on a phone: the pickers and the Show button are not on one line (their middles at %v px)", page, got.Controls)
			break
		}
	}
}

package web

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/ingestworks/ingest/internal/rig/browsertest"
)

// TestScriptsInBrowser: in Chromium, every title of the Taiwan and Hong
// Kong charts is in Traditional Chinese as the browser reads its language
// (the lang it inherits), so that it is drawn in Chinese forms, and the
// charts of Taiwan, Hong Kong, Japan, Korea, Saudi Arabia and Thailand are
// taken on a phone and a desktop, into INGEST_SCRIPT_SHOTS when set (a
// directory of the test's own otherwise), to be looked at.
func TestScriptsInBrowser(t *testing.T) {
	t.Parallel()
	srv := scriptsServer(t)
	ctx := browsertest.Tab(t)
	dir := os.Getenv("INGEST_SCRIPT_SHOTS")
	if dir == "" {
		dir = t.TempDir()
	}
	for _, sc := range screens {
		for _, region := range []string{"TW", "HK", "JP", "KR", "SA", "TH"} {
			browsertest.Do(t, ctx, sc.name+" "+region, chromedp.EmulateViewport(sc.w, sc.h, chromedp.EmulateScale(2)),
				chromedp.Navigate(srv.URL+"/charts/"+region), chromedp.WaitVisible(chromedp.CSS(`table.chart-table`)))
			if region == "TW" || region == "HK" {
				langs := browsertest.Eval[[]string](t, ctx, `[...document.querySelectorAll('a.title, a.channel, a.yt span[dir]')]
					.map(e => e.closest('[lang]').lang + ' ' + e.textContent)`)
				if len(langs) == 0 {
					t.Fatalf("%s %s: no title on the page", sc.name, region)
				}
				for _, l := range langs {
					if !strings.HasPrefix(l, "zh-Hant ") {
						t.Errorf("%s %s: %q is not read as zh-Hant", sc.name, region, l)
					}
				}
			}
			if region == "SA" {
				arabicAligned(t, ctx, sc.name+" SA chart")
			}
			pickersWhole(t, ctx, sc.name+" "+region+" chart")
			png, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, "chart-"+region+"-"+sc.name+".png"), png, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	browsertest.Do(t, ctx, "the worldwide page", chromedp.Navigate(srv.URL+"/worldwide"), chromedp.WaitVisible(chromedp.CSS(`ol.world`)))
	arabicAligned(t, ctx, "worldwide page")
	t.Logf("screenshots in %s", dir)
}

// arabicAligned checks that the page's Arabic title ends at the right of
// its box, as a right-to-left text starts, on every page alike.
func arabicAligned(t *testing.T, ctx context.Context, where string) {
	t.Helper()
	gap := browsertest.Eval[float64](t, ctx, `(() => { const a = document.querySelector('a.title[lang=ar]'); const r = document.createRange();
		r.selectNodeContents(a); return a.getBoundingClientRect().right - r.getBoundingClientRect().right; })()`)
	if gap > 2 {
		t.Errorf("%s: the Arabic title ends %.0f px left of its box's right edge, want it aligned right", where, gap)
	}
}

// pickersWhole checks that each picker of a chart's page shows its choice
// whole: the chosen option's words as the select draws them fit inside
// it, beside its arrow (a phone cut "Saudi Arabia (SA)" to "Saudi Arabia
// (SA" beside a picker of one category).
func pickersWhole(t *testing.T, ctx context.Context, where string) {
	t.Helper()
	cut := browsertest.Eval[[]string](t, ctx, `(() => {
		const out = [], c = document.createElement('canvas').getContext('2d');
		for (const s of document.querySelectorAll('form.pick select')) {
			const st = getComputedStyle(s), text = s.options[s.selectedIndex].textContent;
			c.font = st.font;
			// The arrow takes about a line's height at the select's right.
			const room = s.clientWidth - parseFloat(st.paddingLeft) - parseFloat(st.paddingRight) - parseFloat(st.fontSize);
			if (c.measureText(text).width > room) out.push(s.name + ': ' + text + ' (' + Math.round(c.measureText(text).width) + ' px in ' + Math.round(room) + ')');
		}
		return out;
	})()`)
	if len(cut) > 0 {
		t.Errorf("%s: pickers cut their choice: %q", where, cut)
	}
}

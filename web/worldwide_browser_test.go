package web

import (
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/ingestworks/ingest/clock"
	"github.com/ingestworks/ingest/internal/rig/browsertest"
	"github.com/ingestworks/ingest/internal/rig/storetest"
	"github.com/ingestworks/ingest/regions"
)

// TestWorldwidePageInBrowser: with every region of the built-in catalogue
// charted, one video in all of them and one in every other, the
// worldwide page on a phone (390x844) and a desktop (1280x900) shows
// rows on its first screen, nothing wider than the screen, the video's
// regions by area a tap away, and axe-core finds no serious or critical
// violation, the regions folded or open.
func TestWorldwidePageInBrowser(t *testing.T) {
	t.Parallel()
	ctx := browsertest.Tab(t)
	db := storetest.Open(t)
	t0 := time.Date(2026, 11, 20, 9, 0, 0, 0, time.UTC)
	for i, r := range regions.Builtin {
		ids := []string{"everywhere"}
		if i%2 == 0 {
			ids = append(ids, "every-other")
		}
		regionRun(t, db, r.Code, "", t0.Add(time.Duration(i)*time.Second), worldVideos(t0, append(ids, r.Code+"-local-a-rather-long-title-word")...)...)
	}
	s, err := New(Config{DB: db, Listen: "127.0.0.1:0", Clock: clock.Func(func() time.Time { return t0.Add(time.Hour) })})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(s)
	defer srv.Close()
	areas := map[string]bool{}
	for _, r := range regions.Builtin {
		areas[r.Area] = true
	}
	for _, screen := range []struct {
		name       string
		w, h       int64
		scale      float64
		onFirstOne int
	}{{"phone", 390, 844, 2, 4}, {"desktop", 1280, 900, 1, 6}} {
		browsertest.Do(t, ctx, screen.name, chromedp.EmulateViewport(screen.w, screen.h, chromedp.EmulateScale(screen.scale)),
			chromedp.Navigate(srv.URL+"/worldwide"), chromedp.WaitVisible(chromedp.CSS(`ol.world`)))
		if n := browsertest.Eval[int](t, ctx, `[...document.querySelectorAll('ol.world > li')].filter(li => li.getBoundingClientRect().bottom <= window.innerHeight).length`); n < screen.onFirstOne {
			t.Errorf("%s: %d videos whole on the first screen, want at least %d", screen.name, n, screen.onFirstOne)
		}
		wide := func() {
			t.Helper()
			if wide := browsertest.Eval[[]string](t, ctx, `[...document.querySelectorAll('body *')].filter(e => e.getBoundingClientRect().right > document.documentElement.clientWidth + 0.5)
				.slice(0, 5).map(e => e.tagName + '.' + e.className + ': ' + e.textContent.slice(0, 40))`); len(wide) > 0 ||
				browsertest.Eval[bool](t, ctx, `document.documentElement.scrollWidth > document.documentElement.clientWidth`) {
				t.Errorf("%s: the worldwide page is wider than the screen: %q", screen.name, wide)
			}
		}
		wide()
		// The picture keeps to its column: it never covers the title beside it.
		if over := browsertest.Eval[int](t, ctx, `[...document.querySelectorAll('ol.world > li')].filter(li => {
				const pic = li.querySelector('.pic'), title = li.querySelector('a.title');
				return pic && title && pic.getBoundingClientRect().right > title.getBoundingClientRect().left + 0.5;
			}).length`); over > 0 {
			t.Errorf("%s: on %d rows the picture covers the title", screen.name, over)
		}
		if bad := browsertest.Serious(t, ctx); len(bad) > 0 {
			t.Errorf("axe, worldwide (%s): serious or critical violations:\n  %v", screen.name, bad)
		}
		first := browsertest.Text(t, ctx, `ol.world > li:first-child a.title`)
		browsertest.Do(t, ctx, "open the first video's regions", chromedp.Click(chromedp.CSS(`ol.world > li:first-child summary`)),
			chromedp.WaitVisible(chromedp.CSS(`ol.world > li:first-child details[open] dl`)))
		named := browsertest.Eval[int](t, ctx, `document.querySelectorAll('ol.world > li:first-child details dd a').length`)
		grouped := browsertest.Eval[int](t, ctx, `document.querySelectorAll('ol.world > li:first-child details dt').length`)
		if first != "Title everywhere" || named != len(regions.Builtin) || grouped != len(areas) {
			t.Errorf("%s: the first video %q lists %d regions under %d areas; want everywhere, %d under %d", screen.name, first, named, grouped, len(regions.Builtin), len(areas))
		}
		wide()
		if bad := browsertest.Serious(t, ctx); len(bad) > 0 {
			t.Errorf("axe, worldwide with the regions open (%s): serious or critical violations:\n  %v", screen.name, bad)
		}
		if feed := browsertest.Eval[string](t, ctx, `document.querySelector('link[rel=alternate][type="application/atom+xml"]').getAttribute('href')`); !strings.HasSuffix(feed, "/worldwide/feed") {
			t.Errorf("%s: the page names the feed %q", screen.name, feed)
		}
	}
}

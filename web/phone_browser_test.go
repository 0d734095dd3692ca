package web

import (
	"bytes"
	"context"
	"fmt"
	"image/png"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/clock"
	"github.com/ingestworks/ingest/internal/rig/browsertest"
	"github.com/ingestworks/ingest/internal/rig/storetest"
	"github.com/ingestworks/ingest/regions"
)

// screens are the two a reader's page is checked on: a phone and a desktop.
var screens = []struct {
	name string
	w, h int64
}{{"phone", 390, 844}, {"desktop", 1280, 900}}

// fullChartServer serves a US chart of 200 videos whose titles run to
// four lines on a phone, each with a thumbnail on the upstream's host:
// a chart as long as the upstream makes them.
func fullChartServer(t *testing.T) *httptest.Server {
	t.Helper()
	db := storetest.Open(t)
	now := time.Date(2026, 11, 20, 12, 0, 0, 0, time.UTC)
	var vs []ingest.Video
	for i := range 200 {
		id := fmt.Sprintf("vid-%03d", i+1)
		views := int64(90_000_000 - i*400_000)
		vs = append(vs, ingest.Video{ID: id, Title: fmt.Sprintf("Video %d | Official Music Video with a title as long as the charts' own, in two languages and a hashtag #trending", i+1),
			ChannelID: "UC" + id, ChannelTitle: "The Official Channel of " + id + " Records", ViewCount: &views, PublishedAt: now.Add(-time.Duration(i%40+1) * 24 * time.Hour),
			Thumbnail: "https://i.ytimg.com/vi/" + id + "/default.jpg"})
	}
	regionRun(t, db, "US", "", now.Add(-time.Hour), vs...)
	s, err := New(Config{DB: db, Listen: "127.0.0.1:0", Clock: clock.Func(func() time.Time { return now })})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	return srv
}

// onScreen is the page's state as a reader sees it on the first screen.
type onScreen struct {
	Rows      int     // chart rows (or top-10 entries) wholly on the first screen
	FirstRow  float64 // where the first one starts
	Search    bool    // the header's search box is there and usable
	Clamped   int     // titles taller than two lines
	Height    float64 // the whole page
	SideWays  bool    // the page scrolls sideways
	FirstText string  // the first row's text, spaces folded
}

const readScreen = `(() => {
	const rows = [...document.querySelectorAll('table.chart-table tbody tr, li.entry')];
	const s = document.querySelector('header input[type=search]');
	const r = s && s.getBoundingClientRect();
	const tall = [...document.querySelectorAll('a.title, a.hit-title')].filter(a => {
		const cs = getComputedStyle(a);
		return a.getBoundingClientRect().height > 2 * parseFloat(cs.lineHeight) + parseFloat(cs.paddingTop) + parseFloat(cs.paddingBottom) + 1;
	});
	return {Rows: rows.filter(e => e.getBoundingClientRect().bottom <= innerHeight).length,
		FirstRow: rows.length ? rows[0].getBoundingClientRect().top : -1,
		Search: !!r && r.width >= 120 && r.top >= 0 && r.bottom <= innerHeight && getComputedStyle(s).visibility === 'visible',
		Clamped: tall.length, Height: document.documentElement.scrollHeight,
		SideWays: document.documentElement.scrollWidth > document.documentElement.clientWidth,
		FirstText: rows.length ? rows[0].innerText.replace(/\s+/g, ' ').trim() : ''};
})()`

// thumbState reads the thumbnails on the first screen once each has
// loaded or failed: how many, how many asked for the 16:9 picture lazily,
// how many boxes are 16:9, and how many that did not load still show the
// styled fallback (a picture box with its placeholder) and no broken
// picture.
type thumbState struct {
	Shown, Wide, Lazy, Boxes16x9, Failed, Styled, Overlaps int
	Sizes                                                  []string
}

const readThumbs = `(() => {
	const pics = [...document.querySelectorAll('.pic')].filter(p => p.getBoundingClientRect().bottom <= innerHeight);
	const st = {Shown: pics.length, Wide: 0, Lazy: 0, Boxes16x9: 0, Failed: 0, Styled: 0, Overlaps: 0, Sizes: []};
	for (const p of pics) {
		const img = p.querySelector('img'), r = p.getBoundingClientRect();
		const title = p.closest('tr, li').querySelector('a.title, a.hit-title'), tr = title.getBoundingClientRect();
		if (r.left < tr.right && tr.left < r.right && r.top < tr.bottom && tr.top < r.bottom) st.Overlaps++;
		if (!st.Sizes.includes(Math.round(r.width) + 'x' + Math.round(r.height))) st.Sizes.push(Math.round(r.width) + 'x' + Math.round(r.height));
		if (Math.abs(r.width / r.height - 16 / 9) < 0.04) st.Boxes16x9++;
		if (img && /^https:\/\/i\.ytimg\.com\/vi\/[^/]+\/mqdefault\.jpg$/.test(img.src)) st.Wide++;
		if (img && img.loading === 'lazy') st.Lazy++;
		if (img && img.complete && img.naturalWidth === 0) {
			st.Failed++;
			const cs = getComputedStyle(p), is = getComputedStyle(img);
			if (cs.backgroundImage.includes('url(') && (is.display === 'none' || img.getBoundingClientRect().width === 0 ||
				getComputedStyle(img, '::after').backgroundImage.includes('url('))) st.Styled++;
		}
	}
	return st;
})()`

// TestChartOf200RowsInBrowser: the US chart's 200 rows on a phone and a
// desktop: rows on the first screen, each title at most two lines, the
// header's search box there, each row saying what its figures are, the
// top 10, 50, 100 and 200 one tap apart by links that stay on screen,
// 16:9 thumbnails that load lazily and, when the picture host cannot be
// reached (the test's browser reaches no network), a styled box instead
// of a broken picture; and no serious accessibility violation.
func TestChartOf200RowsInBrowser(t *testing.T) {
	t.Parallel()
	srv := fullChartServer(t)
	ctx := browsertest.Tab(t)
	for _, sc := range screens {
		browsertest.Do(t, ctx, sc.name, chromedp.EmulateViewport(sc.w, sc.h, chromedp.EmulateScale(2)),
			chromedp.Navigate(srv.URL+"/charts/US"), chromedp.WaitVisible(chromedp.CSS(`table.chart-table`)))
		got := browsertest.Eval[onScreen](t, ctx, readScreen)
		t.Logf("%s: %d rows on the first screen, the first at %.0f px; page %.0f px", sc.name, got.Rows, got.FirstRow, got.Height)
		if minRows := map[string]int{"phone": 5, "desktop": 6}[sc.name]; got.Rows < minRows {
			t.Errorf("%s: %d rows on the first screen (the first at %.0f px), want at least %d", sc.name, got.Rows, got.FirstRow, minRows)
		}
		if !got.Search {
			t.Errorf("%s: no search box on the first screen", sc.name)
		}
		if got.Clamped > 0 {
			t.Errorf("%s: %d titles take more than two lines", sc.name, got.Clamped)
		}
		if got.SideWays {
			t.Errorf("%s: the page scrolls sideways", sc.name)
		}
		if !strings.Contains(got.FirstText, "90M views") || !strings.Contains(got.FirstText, "uploaded Nov 19, 2026") {
			t.Errorf("%s: the first row says %q, want its views and upload day named as such (90M views, uploaded Nov 19, 2026)", sc.name, got.FirstText)
		}
		if checkThumbs(t, ctx, sc.name, "chart") {
			if d := unlike(picture(t, ctx, `#row-1 .pic`, true), picture(t, ctx, `#row-1 .pic`, false)); d > 0.002 {
				t.Errorf("%s: the first row's picture that did not load differs from its bare placeholder box in %.1f%% of its pixels, want none but the edges' smoothing", sc.name, 100*d)
			}
		}

		jumps := browsertest.Eval[[]string](t, ctx, `[...document.querySelectorAll('nav.jump a')].map(a => a.textContent + '=' + a.getAttribute('href'))`)
		if want := []string{"Top 10=#row-1", "11–50=#row-11", "51–100=#row-51", "101–200=#row-101"}; !slices.Equal(jumps, want) {
			t.Fatalf("%s: the jump links are %q, want %q", sc.name, jumps, want)
		}
		for _, to := range []struct{ link, rank string }{{"101–200", "101"}, {"51–100", "51"}, {"11–50", "11"}, {"Top 10", "1"}} {
			browsertest.Do(t, ctx, "tap "+to.link, chromedp.Click(chromedp.CSS(fmt.Sprintf(`nav.jump a[href="#row-%s"]`, to.rank))))
			await(t, ctx, "the row "+to.rank, fmt.Sprintf(`location.hash === '#row-%s'`, to.rank))
			at := browsertest.Eval[[]float64](t, ctx, fmt.Sprintf(`(() => { const r = document.getElementById('row-%s').getBoundingClientRect(),
				n = document.querySelector('nav.jump').getBoundingClientRect(); return [r.top, r.bottom, n.top, n.bottom, innerHeight]; })()`, to.rank))
			if rank := browsertest.Text(t, ctx, fmt.Sprintf(`#row-%s td.rank .r`, to.rank)); rank != to.rank {
				t.Errorf("%s: %s went to the row ranked %s, want %s", sc.name, to.link, rank, to.rank)
			}
			if row, nav := at[:2], at[2:4]; row[0] < nav[1]-1 || row[1] > at[4] || nav[0] < 0 {
				t.Errorf("%s: after %s, row %s spans %.0f–%.0f px and the jump links %.0f–%.0f px of a %.0f px screen; want the row in view below the links",
					sc.name, to.link, to.rank, row[0], row[1], nav[0], nav[1], at[4])
			}
		}
		if bad := browsertest.Serious(t, ctx); len(bad) > 0 {
			t.Errorf("%s: axe finds serious violations: %v", sc.name, bad)
		}
		shoot(t, ctx, "chart-200-"+sc.name)

		browsertest.Do(t, ctx, "search on "+sc.name, chromedp.Navigate(srv.URL+"/search?q=official"), chromedp.WaitVisible(chromedp.CSS(`ol.hits`)))
		if got := browsertest.Eval[onScreen](t, ctx, readScreen); !got.Search || got.Clamped > 0 || got.SideWays {
			t.Errorf("%s search: the search box on the first screen %v, titles over two lines %d, scrolls sideways %v; want true, 0, false", sc.name, got.Search, got.Clamped, got.SideWays)
		}
		checkThumbs(t, ctx, sc.name, "search")
	}
}

// checkThumbs checks the thumbnails of the first screen: the 16:9
// picture, lazily, in a 16:9 box, and a styled box where it did not load;
// false when there is none to look at.
func checkThumbs(t *testing.T, ctx context.Context, screen, page string) bool {
	t.Helper()
	await(t, ctx, "the pictures", `[...document.querySelectorAll('.pic img')]
		.filter(i => i.getBoundingClientRect().bottom <= innerHeight).every(i => i.complete)`)
	th := browsertest.Eval[thumbState](t, ctx, readThumbs)
	t.Logf("%s %s: thumbnails %v", screen, page, th.Sizes)
	if th.Shown == 0 || th.Wide != th.Shown || th.Lazy != th.Shown || th.Boxes16x9 != th.Shown {
		t.Errorf("%s %s: of %d thumbnails on the first screen, %d ask for mqdefault.jpg, %d lazily, %d sit in a 16:9 box (%v); want all",
			screen, page, th.Shown, th.Wide, th.Lazy, th.Boxes16x9, th.Sizes)
	}
	if th.Overlaps > 0 {
		t.Errorf("%s %s: %d thumbnails lie over their row's title", screen, page, th.Overlaps)
	}
	if th.Failed != th.Shown || th.Styled != th.Failed {
		t.Errorf("%s %s: of %d pictures that could not load (of %d), %d show the styled box rather than a broken picture; want all",
			screen, page, th.Failed, th.Shown, th.Styled)
	}
	return th.Shown > 0
}

// picture is the pixels of the box css selects as the browser draws it,
// with its picture (if withImg) or without: a picture that did not load
// draws nothing over its box's placeholder when the two are the same.
func picture(t *testing.T, ctx context.Context, css string, withImg bool) []byte {
	t.Helper()
	if !withImg {
		browsertest.Do(t, ctx, "take the picture out", chromedp.Evaluate[chromedp.Void](`document.querySelector('`+css+` img').remove()`))
	}
	b, err := chromedp.Run(ctx, chromedp.Screenshot(chromedp.CSS(css)))
	if err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	var px []byte
	for y := img.Bounds().Min.Y; y < img.Bounds().Max.Y; y++ {
		for x := img.Bounds().Min.X; x < img.Bounds().Max.X; x++ {
			r, g, b, a := img.At(x, y).RGBA()
			px = append(px, byte(r>>8), byte(g>>8), byte(b>>8), byte(a>>8))
		}
	}
	return px
}

// unlike is the share of two same-sized pictures' pixels that differ by
// more than edge smoothing does: a broken-picture icon or a border, not
// the subpixel placement of the same drawing.
func unlike(a, b []byte) float64 {
	if len(a) != len(b) || len(a) == 0 {
		return 1
	}
	n := 0
	for i := 0; i < len(a); i += 4 {
		for c := range 3 {
			if d := int(a[i+c]) - int(b[i+c]); d > 48 || d < -48 {
				n++
				break
			}
		}
	}
	return float64(n) / float64(len(a)/4)
}

// await waits until js is true in the tab.
func await(t *testing.T, ctx context.Context, what, js string) {
	t.Helper()
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](js)); err != nil {
		t.Fatalf("wait for %s: %v", what, err)
	}
}

// shoot saves the first screen as name.png into INGEST_PHONE_SHOTS, if set:
// how docs/img's chart-200-*.png and front-*.png are made.
func shoot(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	dir := os.Getenv("INGEST_PHONE_SHOTS")
	if dir == "" {
		return
	}
	browsertest.Do(t, ctx, "back to the top", chromedp.Evaluate[chromedp.Void](`history.replaceState(null, '', location.pathname + location.search); scrollTo(0, 0)`))
	png, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, name+".png"), png, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestFrontPageOnAPhoneInBrowser: the front page with every region
// charted, on a phone and a desktop: the lead's top 10 on the first
// screen, the search box there, the rows saying what their figures are,
// 16:9 thumbnails with their styled fallback, the region list open at the
// reader's area alone (every other one a tap away, collapsed), and no
// serious accessibility violation.
func TestFrontPageOnAPhoneInBrowser(t *testing.T) {
	t.Parallel()
	srv := everyRegionServer(t)
	ctx := browsertest.Tab(t)
	browsertest.Do(t, ctx, "a blank page", chromedp.Navigate("about:blank"))
	speaking(t, ctx, "en-US,en;q=0.9")
	var americas []string
	for _, r := range regions.Builtin {
		if r.Area == regions.Americas {
			americas = append(americas, r.Code)
		}
	}
	for _, sc := range screens {
		browsertest.Do(t, ctx, sc.name, chromedp.EmulateViewport(sc.w, sc.h, chromedp.EmulateScale(2)),
			chromedp.Navigate(srv.URL+"/"), chromedp.WaitVisible(chromedp.CSS(`section.top`)))
		got := browsertest.Eval[onScreen](t, ctx, readScreen)
		t.Logf("%s: %d entries on the first screen, the first at %.0f px; page %.0f px", sc.name, got.Rows, got.FirstRow, got.Height)
		if got.Rows < 3 {
			t.Errorf("%s: %d of the lead's entries on the first screen, want its 3", sc.name, got.Rows)
		}
		if !got.Search {
			t.Errorf("%s: no search box on the first screen", sc.name)
		}
		if got.SideWays {
			t.Errorf("%s: the page scrolls sideways", sc.name)
		}
		if !strings.Contains(got.FirstText, "2M views") || !strings.Contains(got.FirstText, "uploaded Nov 18, 2026") {
			t.Errorf("%s: the first entry says %q, want its views and upload age named as such", sc.name, got.FirstText)
		}
		checkThumbs(t, ctx, sc.name, "front")
		shown := browsertest.Eval[[]string](t, ctx, `[...document.querySelectorAll('nav.regions ul.places a')].filter(a => a.checkVisibility())
			.map(a => new URL(a.href).searchParams.get('region'))`)
		slices.Sort(shown)
		slices.Sort(americas)
		if !slices.Equal(shown, americas) {
			t.Errorf("%s: the regions shown before any tap are %v, want the reader's area's (Americas) %v", sc.name, shown, americas)
		}
		if sc.name == "phone" && got.Height > 1.8*float64(sc.h) {
			t.Errorf("phone: the front page is %.0f px long, want under 1.8 screens with the other areas collapsed", got.Height)
		}
		if bad := browsertest.Serious(t, ctx); len(bad) > 0 {
			t.Errorf("%s: axe finds serious violations: %v", sc.name, bad)
		}
		shoot(t, ctx, "front-"+sc.name)
		browsertest.Do(t, ctx, "open Asia", chromedp.Click(chromedp.CSS(`nav.regions #area-asia`)),
			chromedp.WaitVisible(chromedp.CSS(`nav.regions a[href="/?region=JP"]`)))
	}
}

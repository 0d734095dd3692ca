package web

import (
	"context"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"

	"github.com/ingestworks/ingest/clock"
	"github.com/ingestworks/ingest/internal/rig/browsertest"
	"github.com/ingestworks/ingest/regions"
	"github.com/ingestworks/ingest/store"
)

// everyRegionServer serves a database holding a chart of every region
// of the built-in catalogue.
func everyRegionServer(t *testing.T) *httptest.Server {
	t.Helper()
	now := time.Date(2026, 11, 20, 12, 0, 0, 0, time.UTC)
	_, srv := leadServer(t, &now, regions.Builtin.Codes()...)
	return srv
}

// speaking makes the tab's requests say languages in Accept-Language.
func speaking(t *testing.T, ctx context.Context, languages string) {
	t.Helper()
	browsertest.Do(t, ctx, "speak "+languages, chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		if _, err := cdp.Call(ctx, tg, network.Enable, network.EnableParams{}); err != nil {
			return err
		}
		_, err := cdp.Call(ctx, tg, network.SetExtraHTTPHeaders, network.SetExtraHTTPHeadersParams{Headers: network.Headers{"Accept-Language": languages}})
		return err
	}))
}

// leading is the region the front page in the tab leads with, as its
// heading names it, and why.
func leading(t *testing.T, ctx context.Context) string {
	t.Helper()
	return browsertest.Eval[string](t, ctx, `document.querySelector('section.top h2 a').textContent + ' | ' + document.querySelector('section.top p.why').textContent`)
}

// TestFrontPageAtEveryRegionInBrowser: with every region charted, the
// front page leads with the region of the browser's languages; every
// region is one tap away, listed once by name under its area in the
// catalogue's order of areas; a tap makes it the lead, which later visits
// keep (no script: a link and a cookie) until the reader goes back to
// their language; and on a phone nothing is wider than the screen.
func TestFrontPageAtEveryRegionInBrowser(t *testing.T) {
	t.Parallel()
	ctx := browsertest.Tab(t)
	srv := everyRegionServer(t)
	browsertest.Do(t, ctx, "a blank page", chromedp.Navigate("about:blank"))
	speaking(t, ctx, "pt-BR,pt;q=0.9,en;q=0.8")
	browsertest.Do(t, ctx, "open the front page", chromedp.Navigate(srv.URL+"/"), chromedp.WaitVisible(chromedp.CSS(`section.top`)))
	if got := leading(t, ctx); !strings.HasPrefix(got, "Brazil | From your browser's language") {
		t.Errorf("pt-BR: the front page leads with %q, want Brazil, from the browser's language", got)
	}
	if n := browsertest.Eval[int](t, ctx, `document.querySelectorAll('section.top li.entry').length`); n != 3 {
		t.Errorf("Brazil's top: %d videos, want its 3", n)
	}

	listed := browsertest.Eval[[]string](t, ctx, `[...document.querySelectorAll('nav.regions section.area')].flatMap(s =>
		[...s.querySelectorAll('a')].map(a => s.querySelector('h3').textContent + '/' + new URL(a.href).searchParams.get('region') + '/' + a.textContent))`)
	var want []string
	for _, a := range regions.Areas {
		var names []string
		for _, r := range regions.Builtin {
			if r.Area == a {
				names = append(names, a+"/"+r.Code+"/"+r.Name)
			}
		}
		slices.SortFunc(names, func(x, y string) int {
			return strings.Compare(x[strings.LastIndex(x, "/"):], y[strings.LastIndex(y, "/"):])
		})
		want = append(want, names...)
	}
	if !slices.Equal(listed, want) {
		t.Errorf("the regions listed, area/code/name:\n%v\nwant every region once, by area, each area by name:\n%v", listed, want)
	}

	browsertest.Do(t, ctx, "tap Japan", chromedp.Click(chromedp.CSS(`nav.regions #area-asia`)), chromedp.Click(chromedp.CSS(`nav.regions a[href="/?region=JP"]`)),
		chromedp.WaitVisible(chromedp.CSS(`section.top h2#top-JP`)))
	if got := leading(t, ctx); !strings.HasPrefix(got, "Japan | Your choice") {
		t.Errorf("after tapping Japan the front page leads with %q, want Japan, the reader's choice", got)
	}
	speaking(t, ctx, "de-DE")
	browsertest.Do(t, ctx, "come back later", chromedp.Navigate(srv.URL+"/"), chromedp.WaitVisible(chromedp.CSS(`section.top`)))
	if got := leading(t, ctx); !strings.HasPrefix(got, "Japan | Your choice") {
		t.Errorf("a later visit in German leads with %q, want the choice remembered", got)
	}
	browsertest.Do(t, ctx, "go back to the browser's language", chromedp.Click(chromedp.CSS(`p.why a[href="/?region=auto"]`)),
		chromedp.WaitVisible(chromedp.CSS(`section.top h2#top-DE`)))
	if got := leading(t, ctx); !strings.HasPrefix(got, "Germany | From your browser's language") {
		t.Errorf("back to the browser's language: leads with %q, want Germany", got)
	}

	browsertest.Do(t, ctx, "a phone", chromedp.EmulateViewport(390, 844, chromedp.EmulateScale(2)),
		chromedp.Navigate(srv.URL+"/"), chromedp.WaitVisible(chromedp.CSS(`section.top`)))
	if wide := browsertest.Eval[[]string](t, ctx, `[...document.querySelectorAll('body *')].filter(e => e.getBoundingClientRect().right > document.documentElement.clientWidth + 0.5)
		.slice(0, 5).map(e => e.tagName + '.' + e.className + ': ' + e.textContent.slice(0, 40))`); len(wide) > 0 ||
		browsertest.Eval[bool](t, ctx, `document.documentElement.scrollWidth > document.documentElement.clientWidth`) {
		t.Errorf("on a 390px phone the front page is wider than the screen: %q", wide)
	}
}

// TestFrontPageScreenshots takes the front page with every region
// charted, from the database INGEST_FRONT_SHOTS_DB names (bin/ingest run
// --once --regions all against bin/fakeyt, docs/api.md), on a desktop
// (1280x900) and a phone (390x844), into INGEST_FRONT_SHOTS as
// front-all-regions-desktop.png and front-all-regions-phone.png: how
// docs/img's are made. Skipped without both.
func TestFrontPageScreenshots(t *testing.T) {
	dir, path := os.Getenv("INGEST_FRONT_SHOTS"), os.Getenv("INGEST_FRONT_SHOTS_DB")
	if dir == "" || path == "" {
		t.Skip("INGEST_FRONT_SHOTS names the directory the screenshots go to, INGEST_FRONT_SHOTS_DB the database")
	}
	db, err := store.OpenExisting(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	s, err := New(Config{Clock: clock.System, DB: db, Listen: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(s)
	defer srv.Close()
	ctx := browsertest.Tab(t)
	browsertest.Do(t, ctx, "a blank page", chromedp.Navigate("about:blank"))
	speaking(t, ctx, "en-GB,en;q=0.9")
	for _, screen := range []struct {
		name string
		w, h int64
	}{{"desktop", 1280, 900}, {"phone", 390, 844}} {
		browsertest.Do(t, ctx, screen.name, chromedp.EmulateViewport(screen.w, screen.h),
			chromedp.Navigate(srv.URL+"/"), chromedp.WaitVisible(chromedp.CSS(`main`)))
		png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "front-all-regions-"+screen.name+".png"), png, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

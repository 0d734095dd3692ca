package main

import (
	"bytes"
	"compress/gzip"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/ingestworks/ingest/internal/rig/browsertest"
)

// TestReaderScreenshots takes the reader's pages (the front page, a chart,
// a category chart, search and a video) on a desktop (1366x900) and a
// phone (390x844), under the standard standing (no computed figures) and
// under extended (--derived on), the worldwide page among them, into INGEST_READER_SHOTS as
// reader-<standing>-<page>-<desktop|phone>.png, the first screen of each;
// and logs each page's bytes on the wire, plain and gzipped, and where the
// chart's first row starts on the phone. Skipped without
// INGEST_READER_SHOTS: it is how docs/img's reader-*.png are made.
func TestReaderScreenshots(t *testing.T) {
	dir := os.Getenv("INGEST_READER_SHOTS")
	if dir == "" {
		t.Skip("INGEST_READER_SHOTS names the directory the screenshots go to")
	}
	for _, st := range []struct {
		name string
		env  []string
	}{
		{"standard", []string{"INGEST_DERIVED", "off"}},
		{"extended", []string{"INGEST_STANDING", "extended", "INGEST_STATS_RETENTION", "400d", "INGEST_DERIVED", "on"}},
	} {
		d := startDashboardWith(t, st.env...)
		ctx := browsertest.Tab(t)
		browsertest.Do(t, ctx, "sign in", chromedp.Navigate(d.base+"/login"), chromedp.SendKeys(chromedp.CSS(`input[name=token]`), uiToken),
			chromedp.Submit(chromedp.CSS(`form.login`)), chromedp.WaitVisible(chromedp.CSS(`section.top`)))
		pages := []struct{ name, path string }{
			{"front", "/"}, {"chart", "/charts/US"}, {"category-chart", "/charts/US?category=10"},
			{"search", "/search?q=burger"}, {"video", "/videos/" + url.PathEscape(d.hostileID(t))}, {"worldwide", "/worldwide"},
		}
		for _, screen := range []struct {
			name string
			w, h int64
		}{{"desktop", 1366, 900}, {"phone", 390, 844}} {
			browsertest.Do(t, ctx, screen.name, chromedp.EmulateViewport(screen.w, screen.h))
			for _, p := range pages {
				browsertest.Do(t, ctx, "open "+p.path, chromedp.Navigate(d.base+p.path), chromedp.WaitVisible(chromedp.CSS(`main`)))
				png, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
				if err != nil {
					t.Fatal(err)
				}
				name := "reader-" + st.name + "-" + p.name + "-" + screen.name + ".png"
				if err := os.WriteFile(filepath.Join(dir, name), png, 0o644); err != nil {
					t.Fatal(err)
				}
				if screen.name == "phone" && (p.name == "chart" || p.name == "category-chart" || p.name == "front") {
					top := browsertest.Eval[float64](t, ctx, `(document.querySelector('table.chart-table tbody tr') || document.querySelector('li.entry')).getBoundingClientRect().top`)
					t.Logf("%s %s: first row at %.0f px on a 390x844 phone", st.name, p.name, top)
				}
			}
		}
		for _, p := range pages {
			plain, zipped := wire(t, d.base+p.path)
			t.Logf("%s %s: %d bytes plain, %d gzipped (%.1f%%)", st.name, p.path, plain, zipped, 100*float64(zipped)/float64(plain))
		}
	}
}

// wire is the bytes of path's answer as sent, without and with gzip.
func wire(t *testing.T, u string) (plain, zipped int) {
	t.Helper()
	for _, enc := range []string{"identity", "gzip"} {
		req, _ := http.NewRequest("GET", u, nil)
		req.Header.Set("Authorization", "Bearer "+uiToken)
		req.Header.Set("Accept-Encoding", enc)
		res, err := (&http.Transport{DisableCompression: true}).RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if enc == "gzip" {
			zipped = len(b)
			if zr, err := gzip.NewReader(bytes.NewReader(b)); err != nil || res.Header.Get("Content-Encoding") != "gzip" {
				t.Errorf("%s: not gzipped (%v)", u, err)
			} else {
				io.Copy(io.Discard, zr)
			}
		} else {
			plain = len(b)
		}
	}
	return plain, zipped
}

package web

import (
	"context"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/ingestworks/ingest/internal/browsertest"
)

// shown is what a chart page shows in the tab: its language tabs (the
// current one starred), then its rows as rank:video.
func shown(t *testing.T, ctx context.Context) string {
	t.Helper()
	return browsertest.Eval[string](t, ctx, `[...document.querySelectorAll('nav[aria-label=Languages] a')]
		.map(a => a.textContent + (a.getAttribute('aria-current') === 'page' ? '*' : '')).join(' ') + ' | ' +
		[...document.querySelectorAll('table.chart-table tbody tr')]
		.map(r => r.querySelector('td.rank').textContent + ':' + r.querySelector('td.video a').textContent.replace('Video ', '')).join(' ')`)
}

// TestChartLanguageTabsInBrowser follows a chart's language tabs, its
// previous run, its time picker and its All tab by clicking, as a person
// would, and reads what each page shows.
func TestChartLanguageTabsInBrowser(t *testing.T) {
	t.Parallel()
	ctx := browsertest.Tab(t)
	srv, _ := languageServer(t)
	tabs := `nav[aria-label=Languages] `
	browsertest.Do(t, ctx, "open the US chart", chromedp.Navigate(srv.URL+"/charts/US"), chromedp.WaitVisible(chromedp.CSS(`table.chart-table`)))
	if got, want := shown(t, ctx), "All* hi en | 1:b 2:a 3:c"; got != want {
		t.Errorf("latest run: shows %q, want %q", got, want)
	}

	browsertest.Do(t, ctx, "click the hi tab", chromedp.Click(chromedp.CSS(tabs+`a[href="/charts/US?language=hi"]`)),
		chromedp.WaitVisible(chromedp.CSS(tabs+`a[aria-current=page][href="/charts/US?language=hi"]`)))
	if got, want := shown(t, ctx), "All hi* en | 2:a 3:c"; got != want {
		t.Errorf("latest run in hi: shows %q, want %q", got, want)
	}
	browsertest.Do(t, ctx, "previous run", chromedp.Click(chromedp.CSS(`a.prev`)), chromedp.WaitVisible(chromedp.CSS(tabs+`a[href*="language=fr"]`)))
	if got, want := shown(t, ctx), "All hi* en fr | 1:a 4:c"; got != want {
		t.Errorf("the run before in hi: shows %q, want %q", got, want)
	}

	browsertest.Do(t, ctx, "the chart a day earlier", chromedp.SetValue(chromedp.CSS(`input#at`), "2026-11-20T09:00"),
		chromedp.Submit(chromedp.CSS(`form.inline`)), chromedp.WaitVisible(chromedp.CSS(tabs+`a[href*="language=ta"]`)))
	if got, want := shown(t, ctx), "All hi* en ta | 1:a 3:c 6:f"; got != want {
		t.Errorf("the first run, picked by time, in hi: shows %q, want %q", got, want)
	}
	if q := browsertest.Eval[string](t, ctx, `location.search`); !strings.Contains(q, "language=hi") {
		t.Errorf("the time picker sent %s, without the language", q)
	}

	browsertest.Do(t, ctx, "click All", chromedp.Click(chromedp.CSS(tabs+`a:first-of-type`)),
		chromedp.WaitVisible(chromedp.CSS(tabs+`a[aria-current=page]:not([href*="language"])`)))
	if got, want := shown(t, ctx), "All* hi en ta | 1:a 2:b 3:c 4:d 5:e 6:f 7:g"; got != want {
		t.Errorf("the first run in every language: shows %q, want %q", got, want)
	}
}

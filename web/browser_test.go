package web

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/ingestworks/ingest/internal/rig/browsertest"
)

// shown is what a chart page shows in the tab: its language tabs (each
// by the language it keeps, the current one starred), then its rows as
// rank:video.
func shown(t *testing.T, ctx context.Context) string {
	t.Helper()
	return browsertest.Eval[string](t, ctx, `[...document.querySelectorAll('nav[aria-label=Languages] a')]
		.map(a => (new URL(a.href).searchParams.get('language') || 'All') + (a.getAttribute('aria-current') === 'page' ? '*' : '')).join(' ') + ' | ' +
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
	browsertest.Do(t, ctx, "previous run", chromedp.Click(chromedp.CSS(`details.runs summary`)), chromedp.Click(chromedp.CSS(`a.prev`)),
		chromedp.WaitVisible(chromedp.CSS(tabs+`a[href*="language=fr"]`)))
	if got, want := shown(t, ctx), "All hi* en fr | 1:a 4:c"; got != want {
		t.Errorf("the run before in hi: shows %q, want %q", got, want)
	}

	browsertest.Do(t, ctx, "the chart a day earlier", chromedp.Click(chromedp.CSS(`details.runs summary`)), chromedp.SetValue(chromedp.CSS(`input#at`), "2026-11-20T09:00"),
		chromedp.Submit(chromedp.CSS(`form.inline`)), chromedp.WaitVisible(chromedp.CSS(tabs+`a[href*="language=ta"]`)))
	if got, want := shown(t, ctx), "All en hi* ta | 1:a 3:c 6:f"; got != want {
		t.Errorf("the first run, picked by time, in hi: shows %q, want %q", got, want)
	}
	if q := browsertest.Eval[string](t, ctx, `location.search`); !strings.Contains(q, "language=hi") {
		t.Errorf("the time picker sent %s, without the language", q)
	}

	browsertest.Do(t, ctx, "click All", chromedp.Click(chromedp.CSS(tabs+`a:first-of-type`)),
		chromedp.WaitVisible(chromedp.CSS(tabs+`a[aria-current=page]:not([href*="language"])`)))
	if got, want := shown(t, ctx), "All* en hi ta | 1:a 2:b 3:c 4:d 5:e 6:f 7:g"; got != want {
		t.Errorf("the first run in every language: shows %q, want %q", got, want)
	}
}

// movedClock is a clock a test moves while a server reads it.
type movedClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *movedClock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *movedClock) add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// TestWrongSignInsWaitInBrowser signs in with wrong tokens as a person
// would, typing them into the form: after ten, the page says when to try
// again, and the right token is no use until then; once the wait is over,
// it signs in.
func TestWrongSignInsWaitInBrowser(t *testing.T) {
	t.Parallel()
	ctx := browsertest.Tab(t)
	clock := &movedClock{t: time.Date(2026, 11, 21, 9, 0, 0, 0, time.UTC)}
	s, err := New(Config{Token: testToken, Listen: "0.0.0.0:8080", Clock: clock})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	// signIn types tok into the sign-in form and sends it; the page it
	// leaves is marked, so that what is read is the answer's.
	signIn := func(what, tok, shows string) string {
		t.Helper()
		browsertest.Do(t, ctx, what, chromedp.Navigate(srv.URL+"/login?next=/healthz"), chromedp.WaitVisible(chromedp.CSS(`form.login`)),
			chromedp.SendKeys(chromedp.CSS(`input[name=token]`), tok),
			chromedp.Evaluate[chromedp.Void](`document.body.dataset.left = "yes"`),
			chromedp.Submit(chromedp.CSS(`form.login`)), chromedp.WaitVisible(chromedp.CSS(strings.TrimSpace(`body:not([data-left]) `+shows))))
		return strings.Join(strings.Fields(browsertest.Text(t, ctx, "body")), " ")
	}
	for i := range 10 {
		if got := signIn(fmt.Sprintf("wrong token %d", i+1), fmt.Sprintf("wrong-token-%02d", i), `p.bad`); !strings.Contains(got, "not the one") {
			t.Fatalf("wrong token %d: the page says %q, want that the token is wrong", i+1, got)
		}
	}
	browsertest.Do(t, ctx, "open the sign-in again", chromedp.Navigate(srv.URL+"/login"), chromedp.WaitVisible(chromedp.CSS(`form.login`)))
	if got := browsertest.Text(t, ctx, "p.bad"); !strings.Contains(got, "Try again in 60 seconds, after 09:01:00 UTC") {
		t.Errorf("after ten wrong tokens the sign-in says %q, want when to try again", got)
	}
	if got := signIn("the right token while it waits", testToken, `p.bad`); !strings.Contains(got, "Try again in 60 seconds, after 09:01:00 UTC") {
		t.Errorf("the right token while the address waits: the page says %q, want when to try again", got)
	}
	clock.add(time.Minute)
	if got := signIn("the right token after the wait", testToken, ""); !strings.Contains(got, `"ok"`) {
		t.Errorf("after the wait the right token shows %q, want the page asked for (/healthz)", got)
	}
}

// TestChartBeforeItsFirstRunInBrowser: a chart asked for at a time before
// its first run says so (not that its first run is due) and links to its
// earliest chart, which the link opens.
func TestChartBeforeItsFirstRunInBrowser(t *testing.T) {
	t.Parallel()
	ctx := browsertest.Tab(t)
	srv, t0 := chartServer(t, Config{})
	browsertest.Do(t, ctx, "open the US chart in 2020", chromedp.Navigate(srv.URL+"/charts/US?at=2020-01-01T00:00:00Z"),
		chromedp.WaitVisible(chromedp.CSS(`a.earliest`)))
	if h1, want := browsertest.Text(t, ctx, "h1"), "No United States chart at 2020-01-01 00:00 UTC"; h1 != want {
		t.Errorf("h1 %q, want %q", h1, want)
	}
	if body := browsertest.Text(t, ctx, "main"); strings.Contains(body, "due") || strings.Contains(body, "yet") {
		t.Errorf("the page speaks of a first run to come:\n%s", body)
	}
	browsertest.Do(t, ctx, "follow the earliest chart", chromedp.Click(chromedp.CSS(`a.earliest`)), chromedp.WaitVisible(chromedp.CSS(`table.chart-table`)))
	if q, want := browsertest.Eval[string](t, ctx, `new URL(location.href).searchParams.get('at')`), t0.Format(time.RFC3339); q != want {
		t.Errorf("the earliest chart's link went to at=%s, want the first run's %s", q, want)
	}
}

// TestPublicSiteInBrowser: a --public site without a token, as a reader
// finds it: the charts, no link to the operator's page, whose address is
// no page at all, and the footer's JSON link to the API's index.
func TestPublicSiteInBrowser(t *testing.T) {
	t.Parallel()
	ctx := browsertest.Tab(t)
	srv, _ := chartServer(t, Config{Public: true})
	browsertest.Do(t, ctx, "open the front page", chromedp.Navigate(srv.URL+"/"), chromedp.WaitVisible(chromedp.CSS(`main`)))
	if n := browsertest.Eval[int](t, ctx, `document.querySelectorAll('a[href="/operator"]').length`); n != 0 {
		t.Errorf("the public front page links to the operator's page %d times", n)
	}
	browsertest.Do(t, ctx, "follow the footer's JSON link", chromedp.Click(chromedp.CSS(`footer a`)), chromedp.WaitVisible(chromedp.CSS(`body`)))
	if got := browsertest.Text(t, ctx, "body"); !strings.Contains(got, `"route": "GET /api/v1/charts/{region}"`) || strings.Contains(got, "/api/v1/quota") {
		t.Errorf("the API's index on a public site without a token:\n%s", got)
	}
	browsertest.Do(t, ctx, "open /operator", chromedp.Navigate(srv.URL+"/operator"), chromedp.WaitVisible(chromedp.CSS(`main`)))
	if h1 := browsertest.Text(t, ctx, "h1"); !strings.Contains(h1, "Not Found") {
		t.Errorf("/operator on a public site without a token shows %q, want no such page", h1)
	}
}

// TestOperatorHeaderInBrowser: on a --public site with a token, the
// operator signs in through the form as a person would and finds Sign out
// and the Operator link on reader pages a stranger had asked for first
// (so kept); a stranger asking for the same pages meanwhile gets neither;
// and after Sign out the browser shows the readers' header again.
func TestOperatorHeaderInBrowser(t *testing.T) {
	t.Parallel()
	srv, _ := chartServer(t, Config{Public: true, Token: testToken})
	pages := []string{"/charts/US", "/videos/vid-a", "/"}
	stranger := func(when string) {
		t.Helper()
		for _, path := range pages {
			resp, err := srv.Client().Get(srv.URL + path)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if out, op := headerParts(string(b)); resp.StatusCode != http.StatusOK || out || op {
				t.Errorf("%s, a stranger's %s: %d, Sign out %v, the Operator link %v; want 200 and neither", when, path, resp.StatusCode, out, op)
			}
		}
	}
	stranger("before the operator signs in")
	ctx := browsertest.Tab(t)
	header := func(path string) (signOut, operator int) {
		t.Helper()
		browsertest.Do(t, ctx, "open "+path, chromedp.Navigate(srv.URL+path), chromedp.WaitVisible(chromedp.CSS(`main`)))
		return browsertest.Eval[int](t, ctx, `document.querySelectorAll('header form[action="/logout"] button').length`),
			browsertest.Eval[int](t, ctx, `document.querySelectorAll('header a[href="/operator"]').length`)
	}
	browsertest.Do(t, ctx, "sign in", chromedp.Navigate(srv.URL+"/login?next=/charts/US"), chromedp.WaitVisible(chromedp.CSS(`form.login`)),
		chromedp.SendKeys(chromedp.CSS(`input[name=token]`), testToken),
		chromedp.Submit(chromedp.CSS(`form.login`)), chromedp.WaitVisible(chromedp.CSS(`table.chart-table`)))
	for _, path := range pages {
		if out, op := header(path); out != 1 || op != 1 {
			t.Errorf("signed in, %s shows %d Sign out and %d Operator links, want one of each", path, out, op)
		}
	}
	stranger("while the operator is signed in")
	if t.Failed() {
		t.FailNow() // no Sign out to click
	}
	browsertest.Do(t, ctx, "sign out", chromedp.Navigate(srv.URL+"/charts/US"), chromedp.WaitVisible(chromedp.CSS(`header form.signout`)),
		chromedp.Click(chromedp.CSS(`header form.signout button`)), chromedp.WaitVisible(chromedp.CSS(`form.login`)))
	for _, path := range pages {
		if out, op := header(path); out != 0 || op != 0 {
			t.Errorf("signed out, %s shows %d Sign out and %d Operator links, want none", path, out, op)
		}
	}
}

func (c *movedClock) Now() time.Time { return c.now() }

// Package browsertest gives tests a real headless Chromium: a tab of a
// browser of its own, with a fresh profile and nothing that reaches the
// network by itself, and the few steps every page test takes in it. A test
// is skipped when chromium is not installed (scripts/ensure-chromium.sh
// installs it for make test).
package browsertest

import (
	"context"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// Tab starts a headless Chromium for t and returns a tab in it; both end
// with the test. The tab's context ends a little before the test binary's
// own deadline, so that a browser that hangs fails its test with what it
// was doing: a page's checks grow with the page and slow with the machine,
// and only a hang should fail them.
func Tab(t testing.TB) context.Context {
	t.Helper()
	path := ""
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			path = p
			break
		}
	}
	if path == "" {
		t.Skip("chromium is not installed and could not be: run scripts/ensure-chromium.sh (apt-get install chromium) to run the browser tests")
	}
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(path),
		chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun, chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.UserDataDir(t.TempDir()),
		// Chromium keeps its singleton socket in a directory of TMPDIR,
		// which a killed browser leaves behind: the test's own, removed
		// with it.
		chromedp.Env("TMPDIR=" + t.TempDir()),
		chromedp.WindowSize(1280, 900),
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelTab := chromedp.NewContext(actx)
	cancelTime := context.CancelFunc(func() {})
	if d, ok := t.(interface{ Deadline() (time.Time, bool) }); ok {
		if end, ok := d.Deadline(); ok {
			ctx, cancelTime = context.WithDeadline(ctx, end.Add(-time.Until(end)/10))
		}
	}
	t.Cleanup(func() { cancelTime(); cancelTab(); cancelAlloc() })
	return ctx
}

// Do runs steps in the tab and fails the test with what went wrong.
func Do(t testing.TB, ctx context.Context, what string, steps ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	if err := chromedp.Do(ctx, steps...); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

// Text is the trimmed text of the first element css selects, once there is
// one. It is read by the page itself, in the document of the moment: a
// query by node, as chromedp's own, can name a node of the document a
// click has just replaced, when the browser tells of the new document
// late, as a loaded machine makes it.
func Text(t testing.TB, ctx context.Context, css string) string {
	t.Helper()
	type found struct{ Text string }
	f, err := chromedp.Run(ctx, chromedp.PollFunction[found](
		`(css) => { const e = document.querySelector(css); return e === null ? null : {Text: e.textContent}; }`,
		chromedp.WithPollingArgs(css), chromedp.WithPollingInterval(20*time.Millisecond), chromedp.WithPollingTimeout(0)))
	if err != nil {
		t.Fatalf("text of %s: %v", css, err)
	}
	return strings.TrimSpace(f.Text)
}

// Eval is what js evaluates to in the tab.
func Eval[T any](t testing.TB, ctx context.Context, js string) T {
	t.Helper()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](js))
	if err != nil {
		t.Fatalf("evaluate %s: %v", js, err)
	}
	return v
}

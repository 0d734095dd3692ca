package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/ingestworks/ingest/internal/browsertest"
)

// axeSource installs axe-core from npm into the test's own directory and
// returns axe.min.js; the test skips when npm is not here, and fails when
// it is but the install does not work.
func axeSource(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("npm"); err != nil {
		t.Skip("npm is not installed: the accessibility check needs axe-core from npm")
	}
	dir := t.TempDir()
	cmd := exec.Command("npm", "install", "--no-audit", "--no-fund", "--prefix", dir, "axe-core@4")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("npm install axe-core: %v\n%s", err, stderr.String())
	}
	src, err := os.ReadFile(filepath.Join(dir, "node_modules", "axe-core", "axe.min.js"))
	if err != nil {
		t.Fatal(err)
	}
	return string(src)
}

// axeViolation is what the test reads of one axe-core violation.
type axeViolation struct {
	ID     string   `json:"id"`
	Impact string   `json:"impact"`
	Help   string   `json:"help"`
	Nodes  []string `json:"nodes"`
}

// TestDashboardAccessibility runs axe-core (WCAG 2.x A and AA rules) in
// Chromium over every page of the dashboard, signed out and signed in, on
// a desktop (1366x900) and a phone (390x844): no serious or critical
// violation.
func TestDashboardAccessibility(t *testing.T) {
	t.Parallel()
	ctx := browsertest.Tab(t)
	src := axeSource(t)
	d := startDashboard(t)
	video := d.hostileID(t)
	browsertest.Do(t, ctx, "desktop", chromedp.EmulateViewport(1366, 900))
	check := func(name, path string) {
		t.Helper()
		browsertest.Do(t, ctx, "open "+path, chromedp.Navigate(d.base+path), chromedp.WaitVisible(chromedp.CSS(`main`)))
		if _, err := chromedp.Run(ctx, chromedp.Evaluate[bool](src+"\n;true")); err != nil {
			t.Fatalf("%s: inject axe-core: %v", name, err)
		}
		out, err := chromedp.Run(ctx, chromedp.Evaluate[string](`axe.run(document, {runOnly: {type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'best-practice']}})
			.then(r => JSON.stringify(r.violations.map(v => ({id: v.id, impact: v.impact || '', help: v.help,
				nodes: v.nodes.slice(0, 3).map(n => n.target.join(' '))}))))`, chromedp.EvalAwaitPromise))
		if err != nil {
			t.Fatalf("%s: axe.run: %v", name, err)
		}
		var vs []axeViolation
		if err := json.Unmarshal([]byte(out), &vs); err != nil {
			t.Fatalf("%s: axe's answer %q: %v", name, out, err)
		}
		count := map[string]int{}
		var lines []string
		for _, v := range vs {
			count[v.Impact]++
			lines = append(lines, fmt.Sprintf("%s %s (%s) at %s", v.Impact, v.ID, v.Help, strings.Join(v.Nodes, ", ")))
		}
		t.Logf("axe %s: %d critical, %d serious, %d moderate, %d minor%s", name, count["critical"], count["serious"],
			count["moderate"], count["minor"], strings.Join(append([]string{""}, lines...), "\n  "))
		if count["critical"]+count["serious"] > 0 {
			t.Errorf("axe %s: serious or critical violations:\n  %s", name, strings.Join(lines, "\n  "))
		}
	}
	check("sign-in", "/login?next=%2F")
	browsertest.Do(t, ctx, "sign in", chromedp.SendKeys(chromedp.CSS(`input[name=token]`), uiToken),
		chromedp.Submit(chromedp.CSS(`form.login`)), chromedp.WaitVisible(chromedp.CSS(`section.top`)))
	pages := []struct{ name, path string }{
		{"front", "/"},
		{"chart US", "/charts/US"},
		{"chart US music", "/charts/US?category=10"},
		{"video", "/videos/" + url.PathEscape(video)},
		{"search hits", "/search?q=prank"},
		{"search, sorted and filtered", "/search?q=prank&category=24&sort=newest&language=en"},
		{"chart US by views gained", "/charts/US?sort=gained"},
		{"operator", "/operator"},
		{"chart before its first run", "/charts/US?category=gaming"},
		{"search", "/search"},
		{"search, no hits", "/search?q=zzyzxnothing"},
		{"search, bad region", "/search?q=prank&region=USA"},
		{"not found", "/no/such/page"},
	}
	for _, p := range pages {
		check(p.name, p.path)
	}
	browsertest.Do(t, ctx, "phone", chromedp.EmulateViewport(390, 844, chromedp.EmulateScale(2)))
	for _, p := range pages {
		check(p.name+" (phone)", p.path)
	}
}

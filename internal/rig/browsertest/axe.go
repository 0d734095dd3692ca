package browsertest

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/ingestworks/ingest/internal/rig/npmtest"
)

// Violation is what a test reads of one axe-core violation.
type Violation struct {
	ID     string   `json:"id"`
	Impact string   `json:"impact"`
	Help   string   `json:"help"`
	Nodes  []string `json:"nodes"`
}

func (v Violation) String() string {
	return fmt.Sprintf("%s %s (%s) at %v", v.Impact, v.ID, v.Help, v.Nodes)
}

// axe is axe-core's script, installed from npm once per test binary.
var axe struct {
	once sync.Once
	src  string
	err  error
}

func axeSource(t testing.TB) string {
	t.Helper()
	if _, err := exec.LookPath("npm"); err != nil {
		// Before the once: a skip inside it would leave it done and empty.
		t.Skip("npm is not installed: the accessibility check needs axe-core from npm")
	}
	axe.once.Do(func() {
		dir := npmtest.Install(t, "axe-core@4", "the accessibility check")
		b, err := os.ReadFile(filepath.Join(dir, "node_modules", "axe-core", "axe.min.js"))
		axe.src, axe.err = string(b), err
	})
	if axe.err != nil {
		t.Fatal(axe.err)
	}
	return axe.src
}

// Serious runs axe-core's WCAG 2.1 A and AA rules and best practices over
// the page in the tab and returns its serious and critical violations.
func Serious(t testing.TB, ctx context.Context) []Violation {
	t.Helper()
	src := axeSource(t)
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[bool](src+"\n;true")); err != nil {
		t.Fatalf("inject axe-core: %v", err)
	}
	out, err := chromedp.Run(ctx, chromedp.Evaluate[string](`axe.run(document, {runOnly: {type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'best-practice']}})
		.then(r => JSON.stringify(r.violations.map(v => ({id: v.id, impact: v.impact || '', help: v.help,
			nodes: v.nodes.slice(0, 3).map(n => n.target.join(' '))}))))`, chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatalf("axe.run: %v", err)
	}
	var all, bad []Violation
	if err := json.Unmarshal([]byte(out), &all); err != nil {
		t.Fatalf("axe's answer %q: %v", out, err)
	}
	for _, v := range all {
		if v.Impact == "serious" || v.Impact == "critical" {
			bad = append(bad, v)
		}
	}
	return bad
}

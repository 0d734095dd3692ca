package browsertest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/chromedp/chromedp"
)

// axe is axe-core's script, installed from npm once per test binary.
var axe struct {
	once sync.Once
	src  string
	err  error
}

// AxeSource is axe-core's axe.min.js, installed from npm once per test
// binary; the test skips when npm is not here, and fails when it is but
// the install does not work.
func AxeSource(t testing.TB) string {
	t.Helper()
	if _, err := exec.LookPath("npm"); err != nil {
		t.Skip("npm is not installed: the accessibility check needs axe-core from npm")
	}
	axe.once.Do(func() { axe.src, axe.err = installAxe() })
	if axe.err != nil {
		t.Fatal(axe.err)
	}
	return axe.src
}

func installAxe() (string, error) {
	dir, err := os.MkdirTemp("", "axe-core")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(dir)
	cmd := exec.Command("npm", "install", "--no-audit", "--no-fund", "--prefix", dir, "axe-core@4")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("npm install axe-core: %v\n%s", err, stderr.String())
	}
	src, err := os.ReadFile(filepath.Join(dir, "node_modules", "axe-core", "axe.min.js"))
	return string(src), err
}

// Violation is what a test reads of one axe-core violation.
type Violation struct {
	ID     string   `json:"id"`
	Impact string   `json:"impact"`
	Help   string   `json:"help"`
	Nodes  []string `json:"nodes"`
}

func (v Violation) String() string {
	return fmt.Sprintf("%s %s (%s) at %s", v.Impact, v.ID, v.Help, strings.Join(v.Nodes, ", "))
}

// Axe runs axe-core (src, from AxeSource) over the tab's page with the
// WCAG 2.x A and AA rules and the best practices, logs what it found, and
// returns the serious and critical violations.
func Axe(t testing.TB, ctx context.Context, src, name string) []Violation {
	t.Helper()
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[bool](src+"\n;true")); err != nil {
		t.Fatalf("%s: inject axe-core: %v", name, err)
	}
	out, err := chromedp.Run(ctx, chromedp.Evaluate[string](`axe.run(document, {runOnly: {type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'best-practice']}})
		.then(r => JSON.stringify(r.violations.map(v => ({id: v.id, impact: v.impact || '', help: v.help,
			nodes: v.nodes.slice(0, 3).map(n => n.target.join(' '))}))))`, chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatalf("%s: axe.run: %v", name, err)
	}
	var vs []Violation
	if err := json.Unmarshal([]byte(out), &vs); err != nil {
		t.Fatalf("%s: axe's answer %q: %v", name, out, err)
	}
	count := map[string]int{}
	var serious []Violation
	lines := []string{""}
	for _, v := range vs {
		count[v.Impact]++
		lines = append(lines, v.String())
		if v.Impact == "serious" || v.Impact == "critical" {
			serious = append(serious, v)
		}
	}
	t.Logf("axe %s: %d critical, %d serious, %d moderate, %d minor%s", name, count["critical"], count["serious"],
		count["moderate"], count["minor"], strings.Join(lines, "\n  "))
	return serious
}

package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestPublishWritesTheSite: ingest publish writes the site into a
// directory (its charts' pages and JSON, the sitemap with --public-url),
// says what it wrote, writes nothing the second time over the same data,
// and refuses with exit 2, naming what to fix, a directory that is a file
// or under one, or cannot be written, a --search-url that is not an address, or no
// directory at all.
func TestPublishWritesTheSite(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.mustRun(0, "run", "--once", "--regions", "GB")
	dir := filepath.Join(t.TempDir(), "site")
	res := h.mustRunGrowing(0, "publish", "--public-url", "https://charts.example.org/", dir)
	if !strings.Contains(res.stderr, "msg=published") || !strings.Contains(res.stderr, "written=") {
		t.Errorf("publish: stderr %q, want what it wrote said", res.stderr)
	}
	for _, f := range []string{"index.html", "charts/GB/index.html", "api/v1/charts/GB/index.json", "charts/GB/feed/index.atom", "sitemap.xml", "robots.txt"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Errorf("publish: %v", err)
		}
	}
	if res := h.mustRunGrowing(0, "publish", "--public-url", "https://charts.example.org/", dir); !strings.Contains(res.stderr, " written=0 ") {
		t.Errorf("publish again over the same data: stderr %q, want nothing written", res.stderr)
	}

	file := filepath.Join(t.TempDir(), "a-file")
	os.WriteFile(file, nil, 0o644)
	locked := filepath.Join(t.TempDir(), "locked")
	os.Mkdir(locked, 0o555)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"publish", file}, "DIR " + file + ": not a directory"},
		{[]string{"publish", "--search-url", "search.example", dir}, "--search-url: want an absolute http or https URL"},
		{[]string{"publish", filepath.Join(file, "site")}, "DIR " + filepath.Join(file, "site") + ": not a directory"},
		{[]string{"publish"}, "accepts 1 arg"},
	} {
		if res := h.mustRun(2, c.args...); !strings.Contains(res.stderr, c.want) {
			t.Errorf("%v: stderr %q, want %q", c.args, res.stderr, c.want)
		}
	}
	if os.Geteuid() != 0 { // root writes anywhere
		if res := h.mustRun(2, "publish", locked); !strings.Contains(res.stderr, "DIR "+locked+": cannot write into it") {
			t.Errorf("a directory not writable: stderr %q, want it named", res.stderr)
		}
	}
}

// TestRunPublishesAfterEachLanding: run --once --publish writes the site
// after its passes; the daemon with --publish writes it at its start and
// again once a run lands (here one of run --once beside it), the chart's
// page replaced, and stops on SIGTERM with nothing left staged.
func TestRunPublishesAfterEachLanding(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.tightCosts(1_000_000)
	once := filepath.Join(t.TempDir(), "once")
	h.mustRun(0, "run", "--once", "--regions", "GB", "--publish", once)
	if _, err := os.Stat(filepath.Join(once, "charts", "GB", "index.html")); err != nil {
		t.Fatalf("run --once --publish: %v", err)
	}

	dir := filepath.Join(t.TempDir(), "site")
	page := filepath.Join(dir, "charts", "GB", "index.html")
	p := h.start("run", "--regions", "GB", "--every", "1h", "--publish", dir)
	var first []byte
	if !waitFor(cmdTimeout, func() bool {
		first, _ = os.ReadFile(page)
		return len(first) > 0 || p.exited()
	}) || p.exited() {
		t.Fatalf("the daemon never published GB's chart\n%s", p.out)
	}
	h.mustRun(0, "run", "--once", "--regions", "GB")
	if !waitFor(cmdTimeout, func() bool {
		now, _ := os.ReadFile(page)
		return len(now) > 0 && !bytes.Equal(now, first) || p.exited()
	}) || p.exited() {
		t.Fatalf("a run landed and the daemon did not publish it\n%s", p.out)
	}
	p.signal(t, syscall.SIGTERM)
	if code, exited := p.wait(cmdTimeout); !exited || code != 0 {
		t.Fatalf("SIGTERM: exited %v with %d\n%s", exited, code, p.out)
	}
	if n := strings.Count(p.out.String(), "msg=published"); n < 2 {
		t.Errorf("the daemon said %d publishes, want the start's and the landing's\n%s", n, p.out)
	}
	staged, _ := filepath.Glob(filepath.Join(dir, "charts", "GB", ".*publish-*"))
	if len(staged) > 0 {
		t.Errorf("staged files left: %v", staged)
	}
}

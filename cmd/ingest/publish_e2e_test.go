package main

import (
	"os"
	"path/filepath"
	"strings"
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

package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// writeCosts writes a costs file for the 2026 model whose default pool has
// the given window, and returns its path.
func writeCosts(t *testing.T, dir, name, window string) string {
	t.Helper()
	body := `pools:
  default: {limit: 10000, reserve: 500, window: ` + window + `, day: America/Los_Angeles}
  search:  {limit: 100, reserve: 5, window: 24h, day: America/Los_Angeles}
  stats:   {limit: 10000, reserve: 0, window: 24h, day: America/Los_Angeles}
operations:
  videos.list:          {default: 1}
  videoCategories.list: {default: 1}
  i18nRegions.list:     {default: 1}
  search.list:          {search: 1}
  videos.batchGetStats: {stats: 1}
`
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// Promise 10: two workers of one quota key with different windows. The
// second exits 2 before spending, naming pool, field and both values;
// `ingest quota apply` puts the new window in force for both.
func TestQuotaConfigDisagreementExits2UntilApplied(t *testing.T) {
	t.Parallel()
	for _, backend := range []string{"redis", "sqlite"} {
		t.Run(backend, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t)
			if backend == "redis" {
				h.withRedis()
			}
			day := writeCosts(t, h.dir, "day.yaml", "24h")
			half := writeCosts(t, h.dir, "half.yaml", "12h")
			h.mustRun(0, "run", "--once", "--regions", "GB", "--costs", day)
			before := h.fake.Requests()
			res := h.mustRun(2, "run", "--once", "--regions", "GB", "--costs", half)
			for _, want := range []string{"pool default", "window", "24h0m0s", "12h0m0s", "ingest quota apply"} {
				if !strings.Contains(res.stderr, want) {
					t.Errorf("stderr does not name %q:\n%s", want, res.stderr)
				}
			}
			if got := h.fake.Requests(); got != before {
				t.Errorf("the disagreeing worker sent %d requests upstream, want 0", got-before)
			}
			show := h.mustRun(0, "quota", "show", "--costs", half)
			if !strings.Contains(show.stdout, "DIFFERS") || !strings.Contains(show.stdout, "window 24h") {
				t.Errorf("quota show does not say the default pool differs:\n%s", show)
			}
			apply := h.mustRun(0, "quota", "apply", "--costs", half)
			if !strings.Contains(apply.stdout, "pool default: limit 10000, reserve 500, window 24h0m0s") ||
				!strings.Contains(apply.stdout, "window 12h0m0s") {
				t.Errorf("quota apply does not say what changed:\n%s", apply)
			}
			h.mustRun(0, "run", "--once", "--regions", "GB", "--costs", half)
			res = h.mustRun(2, "run", "--once", "--regions", "GB", "--costs", day)
			if !strings.Contains(res.stderr, "window is 12h0m0s in the limiter but 24h0m0s in this costs file") {
				t.Errorf("the old file after apply: stderr does not name both windows:\n%s", res.stderr)
			}
		})
	}
}

// A costs file that does not price an operation the worker calls is a
// configuration error found at load: exit 2, nothing sent upstream.
func TestCostsWithoutVideosListExits2(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	path := filepath.Join(h.dir, "partial.yaml")
	body := "pools:\n  default: {limit: 100, window: 24h}\n  search: {limit: 10, window: 24h}\n  stats: {limit: 10, window: 24h}\n" +
		"operations:\n  videoCategories.list: {default: 1}\n  i18nRegions.list: {default: 1}\n  search.list: {search: 1}\n  videos.batchGetStats: {stats: 1}\n"
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	res := h.mustRun(2, "run", "--once", "--costs", path)
	if !strings.Contains(res.stderr, "partial.yaml:5: operations.videos.list: missing") {
		t.Errorf("stderr does not name the file, line and operation:\n%s", res.stderr)
	}
	if n := h.fake.Requests(); n != 0 {
		t.Errorf("upstream saw %d requests, want 0", n)
	}
	if _, err := os.Stat(h.db()); err == nil {
		t.Errorf("the database %s was created by a command that exited on a configuration error", h.db())
	}
}

package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ingestworks/ingest"
)

// smallDisk mounts a tmpfs of size (mount's syntax: 600k, 8m) on a new
// directory, a disk that fills as a real one does; it skips the test where
// this user may not mount.
func smallDisk(t *testing.T, size string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "disk")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size="+size, "tmpfs", dir).CombinedOutput(); err != nil {
		t.Skipf("cannot mount a tmpfs here (%v: %s): the full disk needs root", err, out)
	}
	t.Cleanup(func() { exec.Command("umount", dir).Run() })
	return dir
}

// storedPages is how many chart pages the runs in the database stored.
func storedPages(t *testing.T, path string) int64 {
	t.Helper()
	if _, err := os.Stat(path); err != nil {
		return 0
	}
	return queryInt(t, openDB(t, path), `SELECT coalesce(sum(pages), 0) FROM runs`)
}

func TestDiskFullStopsBeforeTheNextCall(t *testing.T) {
	for _, tc := range []struct {
		name, size string
		somePages  bool
	}{
		{"no room at the start", "600k", false},
		{"the reserve reached part-way", "8m", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t)
			db := filepath.Join(smallDisk(t, tc.size), "ingest.db")
			h.set("INGEST_DB", db)
			res := h.mustRun(1, "run", "--once")
			line := lastLine(res.stderr)
			if !strings.HasPrefix(line, "ingest: "+db+": the disk is full (") || !strings.Contains(line, " free in "+filepath.Dir(db)) ||
				!strings.Contains(line, "free space there or move the database") {
				t.Errorf("last line %q, want the path, the free space and the fix\n%s", line, res)
			}
			if n := strings.Count(res.stderr, "disk is full"); n != 1 {
				t.Errorf("the full disk said %d times, want once\n%s", n, res)
			}
			if strings.Contains(res.stderr, "lock") {
				t.Errorf("the full disk is blamed on a lock\n%s", res)
			}
			pages := storedPages(t, db)
			charged := h.fake.ChargedByOp(testKey)[ingest.OpVideosList]
			if charged != pages {
				t.Errorf("the fake charged %d videos.list calls, the database stored %d pages: want every charged page stored", charged, pages)
			}
			if (pages > 0) != tc.somePages {
				t.Errorf("%d pages stored, want some: %v", pages, tc.somePages)
			}
		})
	}
}

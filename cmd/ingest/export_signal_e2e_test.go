package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// partials lists the files an export to out writes before it renames.
func partials(t *testing.T, out string) []string {
	t.Helper()
	found, err := filepath.Glob(filepath.Join(filepath.Dir(out), "."+filepath.Base(out)+".*"))
	if err != nil {
		t.Fatal(err)
	}
	return found
}

// startExport starts an export to out and returns once its partial file
// is there, being written.
func startExport(t *testing.T, h *harness, out string) *proc {
	t.Helper()
	p := h.start("export", "--since", "2000-01-01", "--out", out, "--force")
	if !waitFor(60*time.Second, func() bool { return len(partials(t, out)) > 0 || p.exited() }) || p.exited() {
		t.Fatalf("export to %s: no partial file while it ran\n%s", out, p.out)
	}
	return p
}

// SIGTERM or SIGINT during export --out: the partial file is removed, the
// file kept from before is untouched, exit 1 saying so. A partial file
// that an export killed outright (SIGKILL) left is removed by the next
// export to the same file; one another live export is writing is not.
func TestExportCleansUpOnSignals(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	buildHistory(t, h.db(), 14, "US")
	out := filepath.Join(h.dir, "keep.csv")
	kept := []byte("an export kept from before\n")
	if err := os.WriteFile(out, kept, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT} {
		p := startExport(t, h, out)
		p.signal(t, sig)
		code, ok := p.wait(cmdTimeout)
		if !ok || code != 1 || !strings.Contains(p.out.String(), "export stopped by a signal: --out "+out+" was not written") {
			t.Errorf("%v during export: exit %d (exited %v), want 1 saying --out was not written\n%s", sig, code, ok, p.out)
		}
		if left := partials(t, out); len(left) > 0 {
			t.Errorf("%v during export left %v", sig, left)
		}
		if got := fileBytes(t, out); !bytes.Equal(got, kept) {
			t.Errorf("%v during export changed %s", sig, out)
		}
	}

	p := startExport(t, h, out)
	if err := p.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	p.wait(cmdTimeout)
	killed := partials(t, out)
	if len(killed) != 1 {
		t.Fatalf("SIGKILL during export left %v, want its partial file", killed)
	}
	live := filepath.Join(h.dir, "."+filepath.Base(out)+"."+itoa(int64(os.Getpid()))+".0")
	if err := os.WriteFile(live, []byte("another export, still being written"), 0o644); err != nil {
		t.Fatal(err)
	}
	res := h.mustRunGrowing(0, "export", "--since", "2000-01-01", "--out", out, "--force")
	if left := partials(t, out); len(left) != 1 || left[0] != live {
		t.Errorf("after the next export: partial files %v, want only the live one %s", left, live)
	}
	if !strings.Contains(res.stderr, "removed the partial file of an earlier export") || !strings.Contains(res.stderr, killed[0]) {
		t.Errorf("the next export does not say it removed %s:\n%s", killed[0], res)
	}
	if got := fileBytes(t, out); bytes.Equal(got, kept) || !bytes.HasPrefix(got, []byte("video_id,")) {
		t.Errorf("the next export did not write %s", out)
	}
}

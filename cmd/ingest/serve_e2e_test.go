package main

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// serve on a database file it cannot write, without REDIS_URL, serves it
// read-only (the API's limiter lives in the process on SQLite), as
// docs/api.md says.
func TestServeOnAReadOnlyFileServesIt(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.mustRun(0, "run", "--once", "--regions", "US")
	dir, err := os.MkdirTemp("", "ingest-serve-ro-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	bin, db := filepath.Join(dir, "ingest"), filepath.Join(dir, "ro.db")
	copyFile(t, ingestBin(t), bin, 0o755)
	copyFile(t, h.db(), db, 0o444)
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	addr := closedAddr(t)
	var out lockedBuffer
	var cmd *exec.Cmd
	// The copy just written may still be open for writing in a child
	// another test forked meanwhile (it inherits the descriptor until its
	// exec): the kernel then refuses to run it (ETXTBSY) until that child
	// execs, a moment later.
	for try := 0; ; try++ {
		cmd = exec.Command(bin, "serve", "--listen", addr)
		cmd.Env = scratchEnv("INGEST_DB="+db, "YOUTUBE_API_KEY="+testKey)
		cmd.Stdout, cmd.Stderr = &out, &out
		if os.Getuid() == 0 {
			cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
		}
		err := cmd.Start()
		if err == nil {
			break
		}
		if !errors.Is(err, syscall.ETXTBSY) || try == 200 {
			t.Fatal(err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	if !waitFor(20*time.Second, func() bool { return apiGetOK("http://" + addr + "/api/v1/runs") }) {
		t.Fatalf("serve on a read-only file without REDIS_URL: /api/v1/runs never answered 200:\n%s", out.String())
	}
}

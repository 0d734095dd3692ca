package main

import (
	"context"
	"fmt"
	gobuild "go/build"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ingestworks/ingest/dbcopy"
	"github.com/ingestworks/ingest/wiring"
)

// litestreamBin is the litestream binary: on PATH, else where go install
// puts it; "" when neither has one.
func litestreamBin() string {
	if path, err := exec.LookPath("litestream"); err == nil {
		return path
	}
	path := filepath.Join(gobuild.Default.GOPATH, "bin", "litestream")
	if _, err := os.Stat(path); err == nil {
		return path
	}
	return ""
}

// litestreamConfig is the shipped deploy/litestream/litestream.yml.
func litestreamConfig(t *testing.T) string {
	t.Helper()
	path, err := filepath.Abs(filepath.Join("..", "..", "deploy", "litestream", "litestream.yml"))
	if err != nil {
		t.Fatal(err)
	}
	return path
}

// restore runs litestream restore of db with the shipped configuration
// into the new file into: into, or "" and what litestream said when it
// wrote none (before its first snapshot, "no matching backup files").
func restore(t *testing.T, bin string, env []string, db, into string) (string, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), cmdTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "restore", "-config", litestreamConfig(t), "-o", into, db)
	cmd.Env = env
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Sprintf("%v: %s", err, out)
	}
	return into, ""
}

// differing are the tables whose rows or checksums differ between the
// databases at src and dst, as ingest db backup and db copy sum them.
func differing(t *testing.T, src, dst string) []string {
	t.Helper()
	ctx := context.Background()
	a, err := wiring.OpenExisting(ctx, src)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := wiring.OpenExisting(ctx, dst)
	if err != nil {
		t.Fatalf("open the restored file: %v", err)
	}
	defer b.Close()
	sums, err := dbcopy.Sums(ctx, a.DB, b.DB, nil)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, s := range sums {
		if !s.Same() {
			out = append(out, fmt.Sprintf("%s (%d rows, the source %d)", s.Table, s.Target.Rows, s.Source.Rows))
		}
	}
	return out
}

// The shipped litestream configuration, with a directory replica, beside a
// daemon that writes: a restore taken while it writes opens and passes
// quick_check; once the daemon has stopped, a restore holds every row of
// every table the database holds, by the sums ingest db backup checks.
func TestLitestreamRestoresWhatTheDaemonWrote(t *testing.T) {
	t.Parallel()
	bin := litestreamBin()
	if bin == "" {
		t.Skip("litestream is not installed (go install github.com/benbjohnson/litestream/cmd/litestream@v0.5.18): deploy/litestream is not exercised")
	}
	h := newHarness(t)
	h.fake.SetChartShape(5, 5)
	p := h.startFor(longTimeout, "run", "--every", "1m", "--pace=false")
	if !waitFor(longTimeout, func() bool { return trendingEntries(h.db()) > 0 || p.exited() }) || p.exited() {
		t.Fatalf("the daemon stored no chart:\n%s", p.out)
	}
	env := scratchEnv("PATH="+os.Getenv("PATH"), "HOME="+os.Getenv("HOME"),
		"INGEST_DB="+h.db(), "LITESTREAM_REPLICA_PATH="+filepath.Join(h.dir, "replica"))
	ctx, cancel := context.WithTimeout(context.Background(), longTimeout)
	defer cancel()
	ls := exec.CommandContext(ctx, bin, "replicate", "-config", litestreamConfig(t))
	ls.Env = env
	var lsOut lockedBuffer
	ls.Stdout, ls.Stderr = &lsOut, &lsOut
	if err := ls.Start(); err != nil {
		t.Fatalf("litestream replicate: %v", err)
	}
	lsDone := make(chan error, 1)
	go func() { lsDone <- ls.Wait() }()
	t.Cleanup(func() {
		ls.Process.Signal(syscall.SIGTERM)
		<-lsDone
	})
	src := openDB(t, h.db())
	runs := queryInt(t, src, `SELECT count(*) FROM runs WHERE finished_ms IS NOT NULL`)
	if !waitFor(longTimeout, func() bool {
		return queryInt(t, src, `SELECT count(*) FROM runs WHERE finished_ms IS NOT NULL`) >= runs+3 || p.exited()
	}) || p.exited() {
		t.Fatalf("the daemon finished no run beside litestream:\n%s", p.out)
	}
	var during, said string
	waitFor(cmdTimeout, func() bool {
		during, said = restore(t, bin, env, h.db(), filepath.Join(h.dir, fmt.Sprintf("during-%d.db", time.Now().UnixNano())))
		return during != ""
	})
	if during == "" {
		t.Fatalf("litestream restored nothing while the daemon wrote: %s\n%s", said, lsOut.String())
	}
	if got := quickCheck(t, during); got != "ok" {
		t.Errorf("the file restored while the daemon wrote: quick_check %q", got)
	}
	if n := trendingEntries(during); n == 0 {
		t.Errorf("the file restored while the daemon wrote holds no chart entry")
	}
	p.signal(t, syscall.SIGTERM)
	if code, exited := p.wait(cmdTimeout); !exited || code != 0 {
		t.Fatalf("the daemon after SIGTERM: exit %d (exited %v)\n%s", code, exited, p.out)
	}
	// litestream replicates what the daemon wrote last on its own time:
	// restores are taken until one holds it all.
	var after string
	var differ []string
	if !waitFor(cmdTimeout, func() bool {
		after, said = restore(t, bin, env, h.db(), filepath.Join(h.dir, fmt.Sprintf("after-%d.db", time.Now().UnixNano())))
		if after == "" {
			return false
		}
		differ = differing(t, h.db(), after)
		return len(differ) == 0
	}) {
		t.Fatalf("no restore holds what the stopped daemon's database holds: %s%s\n%s", strings.Join(differ, ", "), said, lsOut.String())
	}
	if got := quickCheck(t, after); got != "ok" {
		t.Errorf("the file restored after the daemon stopped: quick_check %q", got)
	}
	if out := lsOut.String(); strings.Contains(out, "level=ERROR") {
		t.Errorf("litestream said an error beside the daemon:\n%s", out)
	}
}

package retention

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/store"
	"golang.org/x/sys/unix"
)

// BenchmarkPruneYear prunes a scratch copy of INGEST_BENCH_YEAR_DB (a year
// built by scripts/bench.sh) to its last INGEST_BENCH_KEEP days (default
// 30; or a duration, such as 287h: a daemon's pass prunes an hour), as `ingest prune --keep` does, and reports what it wrote per byte it
// freed (took out of use: given back to the file system or left as free
// pages inside the file for new rows; shrunk-MB is the former), three ways: what SQLite handed to write(2) (wchar), what the
// kernel booked as written (write_bytes: a whole page-cache folio each time
// a page in it is dirtied, so random 4 KB writes into a file read or
// written in large pieces count many times their size), and what reached
// the disk (sectors written on the file's block device: every process's,
// so a busy machine adds its own). It also reports the WAL's peak and the
// time. INGEST_BENCH_BATCH sets Retention.Batch. With INGEST_BENCH_COLD set, the copy's pages are dropped from the
// page cache first, as after a reboot.
func BenchmarkPruneYear(b *testing.B) {
	src := os.Getenv("INGEST_BENCH_YEAR_DB")
	if src == "" {
		b.Skip("INGEST_BENCH_YEAR_DB names the year (scripts/bench.sh builds it)")
	}
	keep := 30 * 24 * time.Hour
	if v := os.Getenv("INGEST_BENCH_KEEP"); v != "" {
		d, err := strconv.Atoi(v)
		keep = time.Duration(d) * 24 * time.Hour
		if err != nil { // a duration: a daemon's pass prunes an hour
			keep, err = time.ParseDuration(v)
		}
		if err != nil || keep <= 0 {
			b.Fatalf("INGEST_BENCH_KEEP=%q: want days (7) or a duration (287h)", v)
		}
	}
	batch, _ := strconv.Atoi(os.Getenv("INGEST_BENCH_BATCH"))
	for range b.N {
		benchPrune(b, src, keep, batch)
	}
}

func benchPrune(b *testing.B, src string, keep time.Duration, batch int) {
	b.StopTimer()
	ctx := context.Background()
	path := scratchCopy(b, src, os.Getenv("INGEST_BENCH_COLD") != "")
	db, err := store.Open(ctx, path)
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	var newest int64
	if err := db.Reader().QueryRow(`SELECT max(started_ms) FROM runs`).Scan(&newest); err != nil {
		b.Fatal(err)
	}
	before := fileSize(b, path)
	inUse := func() int64 {
		s, err := db.Size(ctx)
		if err != nil {
			b.Fatal(err)
		}
		return s.Bytes - s.FreeBytes
	}
	usedBefore := inUse()
	stop, peak := watchWAL(path + "-wal")
	last := readIO(b, path)
	first := last
	pr := newPruner(db)
	pr.afterStep = func(step string) {
		now := readIO(b, path)
		b.Logf("%-7s wchar %7.1f MB  write_bytes %8.1f MB  device %7.1f MB", step, mb(now.wchar-last.wchar),
			mb(now.writeBytes-last.writeBytes), mb(now.device-last.device))
		last = now
	}
	cut := time.UnixMilli(newest).Add(-keep)
	t0 := time.Now()
	b.StartTimer()
	// The longest transaction: how long a daemon's write may wait.
	var longest time.Duration
	tx := time.Now()
	progress := func(ingest.Pruned) { longest, tx = max(longest, time.Since(tx)), time.Now() }
	p, err := pr.prune(ctx, Retention{Before: cut, LedgerBefore: cut, Batch: batch, Progress: progress})
	b.StopTimer()
	took := time.Since(t0)
	stop()
	if err != nil {
		b.Fatal(err)
	}
	end := readIO(b, path)
	// Freed: the bytes the prune took out of use, whether the vacuum gave
	// them back to the file system (the file shrank) or left them as free
	// pages inside it for new rows.
	freed := float64(max(1, usedBefore-inUse()))
	b.Logf("pruned %+v in %s; file %.1f -> %.1f MB", p, took.Round(time.Second), mb(before), mb(fileSize(b, path)))
	b.ReportMetric(took.Seconds(), "s")
	b.ReportMetric(longest.Seconds(), "longest-tx-s")
	b.ReportMetric(mb(int64(freed)), "freed-MB")
	b.ReportMetric(mb(before-fileSize(b, path)), "shrunk-MB")
	b.ReportMetric(float64(end.wchar-first.wchar)/freed, "wchar/freed")
	b.ReportMetric(float64(end.writeBytes-first.writeBytes)/freed, "write_bytes/freed")
	b.ReportMetric(float64(end.device-first.device)/freed, "device/freed")
	b.ReportMetric(mb(peak.Load()), "wal-peak-MB")
	b.ReportMetric(mb(fileSize(b, path)), "after-MB")
	b.ReportMetric(0, "ns/op")
}

// scratchCopy copies src into a temp dir, on disk (synced), and with cold
// drops its pages from the page cache.
func scratchCopy(b *testing.B, src string, cold bool) string {
	dst := filepath.Join(b.TempDir(), "year.db")
	in, err := os.Open(src)
	if err != nil {
		b.Fatal(err)
	}
	defer in.Close()
	out, err := os.Create(dst)
	if err != nil {
		b.Fatal(err)
	}
	defer out.Close()
	if _, err := io.Copy(out, in); err != nil {
		b.Fatal(err)
	}
	if err := out.Sync(); err != nil {
		b.Fatal(err)
	}
	if cold {
		if err := unix.Fadvise(int(out.Fd()), 0, 0, unix.FADV_DONTNEED); err != nil {
			b.Fatal(err)
		}
	}
	return dst
}

// watchWAL polls the WAL's size until stop, keeping its peak.
func watchWAL(wal string) (stop func(), peak *atomic.Int64) {
	peak = new(atomic.Int64)
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		for {
			if fi, err := os.Stat(wal); err == nil && fi.Size() > peak.Load() {
				peak.Store(fi.Size())
			}
			select {
			case <-done:
				return
			case <-time.After(5 * time.Millisecond):
			}
		}
	}()
	return func() { close(done); <-finished }, peak
}

// ioCounts are this process's write counters and its disk's.
type ioCounts struct{ wchar, writeBytes, device int64 }

func readIO(b *testing.B, path string) ioCounts {
	var c ioCounts
	f, err := os.Open("/proc/self/io")
	if err != nil {
		b.Skip("no /proc/self/io")
	}
	defer f.Close()
	for s := bufio.NewScanner(f); s.Scan(); {
		k, v, _ := strings.Cut(s.Text(), ": ")
		n, _ := strconv.ParseInt(v, 10, 64)
		switch k {
		case "wchar":
			c.wchar = n
		case "write_bytes":
			c.writeBytes = n
		}
	}
	c.device = deviceWritten(path)
	return c
}

// deviceWritten is how many bytes the block device holding path has
// written since boot (0 when unknown).
func deviceWritten(path string) int64 {
	var st syscall.Stat_t
	if err := syscall.Stat(path, &st); err != nil {
		return 0
	}
	raw, err := os.ReadFile(fmt.Sprintf("/sys/dev/block/%d:%d/stat", unix.Major(st.Dev), unix.Minor(st.Dev)))
	if err != nil {
		return 0
	}
	f := strings.Fields(string(raw))
	if len(f) < 7 {
		return 0
	}
	sectors, _ := strconv.ParseInt(f[6], 10, 64)
	return sectors * 512
}

func fileSize(b *testing.B, path string) int64 {
	fi, err := os.Stat(path)
	if err != nil {
		b.Fatal(err)
	}
	return fi.Size()
}

func mb(n int64) float64 { return float64(n) / 1e6 }

package sim

import (
	"bufio"
	"os"
	"runtime"
	"runtime/metrics"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"testing/synctest"
	"time"
)

// costEnv names the shape TestCostOfADay measures: "default" (the
// default regions) or "all" (every region). scripts/bench-day.sh drops
// this file into an older tree's simulation too, so it reads nothing of
// the package but what both have: Simulate, Config and shipped.
const costEnv = "INGEST_COST_DAY"

// TestCostOfADay: one undisturbed simulated day of `ingest run` with
// tracking and readers, on one seed, and what it cost this process: the
// bytes the upstream answered on the wire and as JSON decoded (all calls,
// chart pages alone), the
// CPU-seconds and bytes allocated while the day ran, the largest heap
// sampled and the process's peak resident memory. It prints one line for
// scripts/bench-day.sh, which runs it in a process of its own per day so
// that the peak is that day's; it asserts only that the day was good.
func TestCostOfADay(t *testing.T) {
	regions := map[string]string{"default": "", "all": "all"}
	shape, ok := os.LookupEnv(costEnv)
	if !ok {
		t.Skipf("a measurement, not a check: %s=default or %s=all runs it (make bench)", costEnv, costEnv)
	}
	sel, ok := regions[shape]
	if !ok {
		t.Fatalf("%s: %q is neither default nor all", costEnv, shape)
	}
	s := shipped()
	s.Regions = sel
	c := Config{Shape: s, Days: 1, Readers: true, NoSearches: true, Seed: 3969310467, Dir: t.TempDir(),
		Start: time.Date(2027, 3, 13, 12, 0, 0, 0, time.UTC)}
	signalsOutside()
	heap, stop := peakHeap()
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	cpu0 := cpuSeconds(t)
	synctest.Test(t, func(t *testing.T) {
		h, err := Simulate(c)
		if err != nil {
			t.Fatalf("seed %d: %v (log %s)", c.Seed, err, c.Dir)
		}
		cpu := cpuSeconds(t) - cpu0
		runtime.ReadMemStats(&after)
		stop()
		var bytes, chartBytes, charts, json, chartJSON int
		for _, call := range h.Calls {
			bytes += call.Bytes
			json += call.JSON
			if call.Kind == "chart" {
				chartBytes += call.Bytes
				chartJSON += call.JSON
				charts++
			}
		}
		t.Logf("cost: shape=%s calls=%d bytes=%d chart-calls=%d chart-bytes=%d json-bytes=%d chart-json-bytes=%d cpu-s=%.2f alloc-bytes=%d heap-peak=%d rss-peak=%d",
			shape, len(h.Calls), bytes, charts, chartBytes, json, chartJSON, cpu, after.TotalAlloc-before.TotalAlloc, heap.Load(), rssPeak(t))
		for _, f := range Check(h) {
			t.Errorf("seed %d: %s", c.Seed, f)
		}
	})
}

// cpuSeconds is the user and system time this process has taken.
func cpuSeconds(t *testing.T) float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		t.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds()
}

// peakHeap samples the live heap's bytes from outside the bubble, on the
// wall clock (virtual time would pass between samples), until stop.
func peakHeap() (*atomic.Uint64, func()) {
	var peak atomic.Uint64
	done := make(chan struct{})
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	go func() {
		for {
			metrics.Read(sample)
			if v := sample[0].Value.Uint64(); v > peak.Load() {
				peak.Store(v)
			}
			select {
			case <-done:
				return
			case <-time.After(50 * time.Millisecond):
			}
		}
	}()
	var once atomic.Bool
	return &peak, func() {
		if once.CompareAndSwap(false, true) {
			close(done)
		}
	}
}

// rssPeak is the process's peak resident memory (VmHWM), in bytes.
func rssPeak(t *testing.T) int64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return kb * 1024
		}
	}
	t.Fatal("/proc/self/status: no VmHWM")
	return 0
}

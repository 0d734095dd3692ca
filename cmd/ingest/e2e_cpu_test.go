package main

import (
	"cmp"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
)

// cpuEnv names a file where, at the end, the test process writes the
// CPU-seconds (user + sys) that each test's processes took (the binary
// every time it ran, yeardb), the most first, with how many there were,
// under its own and all its children's: make test's table gives the
// package's whole, this says which tests it went to (docs/testing.md,
// "Counted, not claimed").
const cpuEnv = "INGEST_E2E_CPU"

// cpuTaken is each top-level test's processes' CPU-seconds, and their count.
var cpuTaken = struct {
	sync.Mutex
	secs map[string]float64
	runs map[string]int
}{secs: map[string]float64{}, runs: map[string]int{}}

// noteCPU adds what cmd, ended, took to t's top-level test.
func noteCPU(t testing.TB, cmd *exec.Cmd) {
	if cmd.ProcessState == nil || os.Getenv(cpuEnv) == "" {
		return
	}
	top, _, _ := strings.Cut(t.Name(), "/")
	s := cmd.ProcessState.UserTime().Seconds() + cmd.ProcessState.SystemTime().Seconds()
	cpuTaken.Lock()
	defer cpuTaken.Unlock()
	cpuTaken.secs[top] += s
	cpuTaken.runs[top]++
}

// writeCPU writes the file cpuEnv names, when it names one.
func writeCPU() {
	path := os.Getenv(cpuEnv)
	if path == "" {
		return
	}
	var self, children syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &self)
	_ = syscall.Getrusage(syscall.RUSAGE_CHILDREN, &children)
	secs := func(r syscall.Rusage) float64 {
		return float64(r.Utime.Sec+r.Stime.Sec) + float64(r.Utime.Usec+r.Stime.Usec)/1e6
	}
	cpuTaken.Lock()
	defer cpuTaken.Unlock()
	var b strings.Builder
	fmt.Fprintf(&b, "test process %.1f, its children %.1f\n", secs(self), secs(children))
	names := slices.SortedFunc(maps.Keys(cpuTaken.secs), func(a, b string) int {
		return cmp.Or(cmp.Compare(cpuTaken.secs[b], cpuTaken.secs[a]), strings.Compare(a, b))
	})
	for _, k := range names {
		fmt.Fprintf(&b, "%8.2f %5d %s\n", cpuTaken.secs[k], cpuTaken.runs[k], k)
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", cpuEnv, err)
	}
}

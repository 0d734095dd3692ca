package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"testing"
)

// raceTests are the tests whose point is concurrency inside one process:
// when the tests run with -race, these run a binary built with it too, so
// that a race only the daemon's goroutines meet fails them. Every other
// test runs a binary built without -race: the detector then costs the
// binary's every command several times its work, and those commands run
// one goroutine's work at a time. docs/testing.md, "The race detector in
// the binary's tests", says why each is here; a test renamed out of this
// list fails TestRaceTestsAreDocumented.
var raceTests = []string{
	// The daemon with its listener: runs land while readers are served
	// pages built from them.
	"TestKeptPagesAreBuiltBesideTheReaders",
	// The daemon's slots: passes, tracking and the prune in one process.
	"TestDaemonTracksAndPrunes",
	// Signals in flight: a signal meets a pass, a page or a file being
	// written.
	"TestDaemonDrainsOnSIGTERM",
	"TestDaemonSecondSignalStopsAtOnce",
	"TestSecondSignalIsAnInterruption",
	"TestStopWithinItsGrace",
	"TestExportCleansUpOnSignals",
	// Several workers on one limiter: each daemon counts the others
	// beside its passes and its listener.
	"TestWorkersOnOneRedisKeyShareByCount",
	// The flood: readers by the hundred on one listener, beside the
	// daemon's passes.
	"TestFloodOfAPublicListener",
}

// measuredAsDeployed are subtests of raceTests whose checks measure the
// binary as people run it (its resident memory against docs/api.md's
// bound, its hot pages' share of the CPU): they run the binary built
// without -race whatever the tests run with, since the detector multiplies
// both the memory and the CPU of every access. Their test's other cases
// keep the race check. docs/testing.md, "The race detector in the binary's
// tests", names them.
var measuredAsDeployed = []string{
	"TestFloodOfAPublicListener/run_--listen_--public_--regions_all",
}

// build is one binary the tests run, built the first time a test asks for
// it, so that a run of a few tests builds only what they run.
type build struct {
	pkg, name string
	race      bool
	once      sync.Once
	path      string
	err       error
}

var (
	plainIngest = &build{pkg: ".", name: "ingest"}
	raceIngest  = &build{pkg: ".", name: "ingest-race", race: true}
	// The databases the tests start from are built without -race: the
	// builder is a test tool, and SQLite under the race detector writes
	// days of history many times slower.
	yeardbBuild = &build{pkg: "../yeardb", name: "yeardb"}
)

// buildDir holds the builds; TestMain makes it and removes it.
var buildDir string

// ingestBin is the binary t runs: with -race for a test of raceTests (but
// the subtests of measuredAsDeployed) when the tests run with it, else
// without. INGEST_BENCH_BIN names a binary to
// run instead (built from another revision, say): scripts/bench-ab.sh
// times two builds with the same benchmarks.
func ingestBin(t testing.TB) string {
	t.Helper()
	if bin := os.Getenv("INGEST_BENCH_BIN"); bin != "" {
		return bin
	}
	if raceEnabled() && isRaceTest(t.Name()) && !slices.Contains(measuredAsDeployed, t.Name()) {
		return raceIngest.get(t)
	}
	return plainIngest.get(t)
}

// yeardbBin is cmd/yeardb, built without -race.
func yeardbBin(t testing.TB) string {
	t.Helper()
	return yeardbBuild.get(t)
}

// isRaceTest says whether the test named name (a subtest's full name too)
// is one of raceTests.
func isRaceTest(name string) bool {
	top, _, _ := strings.Cut(name, "/")
	return slices.Contains(raceTests, top)
}

// get builds b once, failing t when it cannot be built.
func (b *build) get(t testing.TB) string {
	t.Helper()
	b.once.Do(b.make)
	if b.err != nil {
		t.Fatal(b.err)
	}
	return b.path
}

func (b *build) make() {
	b.path = filepath.Join(buildDir, b.name)
	args := []string{"build", "-o", b.path}
	if b.race {
		// As make test builds the tests: SQLite's translated C is not
		// instrumented, every package of ours is.
		args = append(args, "-race", "-gcflags=modernc.org/sqlite/lib=-race=false")
	}
	ctx, cancel := context.WithTimeout(context.Background(), longTimeout)
	defer cancel()
	if out, err := exec.CommandContext(ctx, "go", append(args, b.pkg)...).CombinedOutput(); err != nil {
		b.err = fmt.Errorf("go %s %s: %v\n%s", strings.Join(args, " "), b.pkg, err, out)
	}
}

// raceEnabled says whether this test binary was built with -race.
var raceEnabled = sync.OnceValue(func() bool {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return false
	}
	for _, s := range bi.Settings {
		if s.Key == "-race" && s.Value == "true" {
			return true
		}
	}
	return false
})

// TestRaceTestsAreDocumented: raceTests name tests of this package, and
// docs/testing.md's table of them names the same, so that a rename cannot
// move a test to the binary without -race unseen, nor the docs drift; and
// measuredAsDeployed names subtests of them the docs name too.
func TestRaceTestsAreDocumented(t *testing.T) {
	t.Parallel()
	defined := map[string]bool{}
	files, _ := filepath.Glob("*_test.go")
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range regexp.MustCompile(`(?m)^func (Test\w+)\(t \*testing\.T\)`).FindAllSubmatch(b, -1) {
			defined[string(m[1])] = true
		}
	}
	for _, name := range raceTests {
		if !defined[name] {
			t.Errorf("raceTests names %s, which no test file of cmd/ingest defines", name)
		}
	}
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "testing.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, section, _ := strings.Cut(string(doc), "\n## The race detector in the binary's tests\n")
	section, _, _ = strings.Cut(section, "\n## ")
	var listed []string
	for _, m := range regexp.MustCompile("(?m)^\\| `(Test\\w+)` \\|").FindAllStringSubmatch(section, -1) {
		listed = append(listed, m[1])
	}
	want := slices.Sorted(slices.Values(raceTests))
	if slices.Sort(listed); !slices.Equal(listed, want) {
		t.Errorf("docs/testing.md, \"The race detector in the binary's tests\", lists\n%v\nraceTests are\n%v", listed, want)
	}
	for _, name := range measuredAsDeployed {
		if !isRaceTest(name) || !strings.Contains(name, "/") {
			t.Errorf("measuredAsDeployed names %s, which is no subtest of raceTests", name)
		}
		if !strings.Contains(section, "`"+name+"`") {
			t.Errorf("docs/testing.md, \"The race detector in the binary's tests\", does not name %s, which measuredAsDeployed runs without -race", name)
		}
	}
}

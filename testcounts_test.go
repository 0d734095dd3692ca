package ingest_test

import (
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
)

// baselineFile holds what scripts/testcounts.go printed when it was last
// refreshed: each package's test functions, t.Run sites and assertions.
const baselineFile = "testdata/testcounts.txt"

// TestCountsKeepTheirBaseline: no package's test functions, t.Run sites or
// assertions fall below the committed baseline, so that a change that
// makes the suite cheaper cannot drop a check unseen. A check that goes
// on purpose, or moves to another package, goes with the baseline lowered
// in the same commit and a CHANGELOG line saying which check went where.
func TestCountsKeepTheirBaseline(t *testing.T) {
	t.Parallel()
	out, err := exec.Command("go", "run", "scripts/testcounts.go").Output()
	if err != nil {
		t.Fatalf("go run scripts/testcounts.go: %v", err)
	}
	raw, err := os.ReadFile(baselineFile)
	if err != nil {
		t.Fatal(err)
	}
	now, base := parseCounts(t, string(out)), parseCounts(t, string(raw))
	names := [3]string{"test functions", "t.Run sites", "assertions"}
	for pkg, want := range base {
		got, ok := now[pkg]
		if !ok {
			t.Errorf("%s: no test file left, the baseline %v (%s)", pkg, want, baselineFile)
			continue
		}
		for i := range want {
			if got[i] < want[i] {
				t.Errorf("%s: %d %s, the baseline %d (%s)", pkg, got[i], names[i], want[i], baselineFile)
			}
		}
	}
	if t.Failed() {
		t.Log("a check went: bring it back, or, if it went on purpose or moved, lower " + baselineFile +
			" (go run scripts/testcounts.go > " + baselineFile + ") in the same commit as a CHANGELOG line saying which check went where")
	} else if string(out) != string(raw) {
		t.Logf("the counts rose past %s: go run scripts/testcounts.go > %s keeps them", baselineFile, baselineFile)
	}
}

// parseCounts reads testcounts' table: a package (or total) and its three
// counts a line, after a header.
func parseCounts(t *testing.T, table string) map[string][3]int {
	t.Helper()
	counts := map[string][3]int{}
	lines := strings.Split(strings.TrimSpace(table), "\n")
	for _, line := range lines[1:] {
		f := strings.Fields(line)
		if len(f) != 4 {
			t.Fatalf("testcounts line %q: want a package and three counts", line)
		}
		var c [3]int
		for i := range c {
			n, err := strconv.Atoi(f[i+1])
			if err != nil {
				t.Fatalf("testcounts line %q: %v", line, err)
			}
			c[i] = n
		}
		counts[f[0]] = c
	}
	return counts
}

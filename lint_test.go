package ingest_test

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
)

// pinned is the tool the Makefile's variable name pins (path@version), so
// that make lint and make test run one version, fetched by the go command
// as a module.
func pinned(t *testing.T, name string) string {
	t.Helper()
	raw, err := os.ReadFile("Makefile")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^` + name + `\s*:=\s*(\S+@\S+)\s*$`).FindSubmatch(raw)
	if m == nil {
		t.Fatalf("Makefile: no line %s := path@version", name)
	}
	return string(m[1])
}

// goRun runs tool with args: what it printed, and what it and the go
// command said besides when it did not exit 0.
func goRun(t *testing.T, tool string, args ...string) (out []byte, failed string) {
	t.Helper()
	cmd := exec.Command("go", append([]string{"run", tool}, args...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return out, fmt.Sprintf("go run %s %s: %v\n%s%s", tool, strings.Join(args, " "), err, out, stderr.Bytes())
	}
	return out, ""
}

// TestStaticcheckFindsNothing: staticcheck, at the Makefile's version,
// finds nothing in the module, so that what it would say never lands.
// Its cache keeps a package's facts until the package changes.
func TestStaticcheckFindsNothing(t *testing.T) {
	t.Parallel()
	tool := pinned(t, "STATICCHECK")
	if _, failed := goRun(t, tool, "./..."); failed != "" {
		t.Errorf("staticcheck finds, to fix (or the go command could not fetch it):\n%s", failed)
	}
}

// testOnly are the functions no command reaches that other packages'
// tests use, each with why it stays where it is: a test file cannot be
// imported from another package. A helper only tests use goes to a rig
// (internal/rig/), as the tests' clock did; what is left is a rule of the
// product that only the binary's tests hold something else to, or a rig's
// own reads.
var testOnly = map[string]string{
	"web.ReaderQuery":                 "web's rule of what varies a reader's answer, which cmd/ingest's test holds the shipped VCL to; a copy in a rig would be a second rule",
	"export.Columns":                  "the export's columns, which cmd/ingest's test holds export --help to; a copy in a rig would be a second list",
	"internal/rig/yeardb.Pick":        "a rig's already: the benches' reads of a built year, which cmd/yeardb only builds",
	"internal/rig/yeardb.pickBusiest": "Pick's",
	"internal/rig/yeardb.pickCharts":  "Pick's",
	"internal/rig/yeardb.pickWords":   "Pick's",
	"internal/rig/yeardb.runVideos":   "Pick's",
}

// TestNothingUnreachable: deadcode, at the Makefile's version, finds no
// function that the commands do not reach but those of testOnly. One
// that only its own package's tests use lives in their _test.go files,
// so that a product file holds what ships.
func TestNothingUnreachable(t *testing.T) {
	t.Parallel()
	tool := pinned(t, "DEADCODE")
	out, failed := goRun(t, tool, "-f", `{{range .Funcs}}{{$.Path}}.{{.Name}} {{.Position}}{{"\n"}}{{end}}`, "./cmd/...")
	if failed != "" {
		t.Fatal(failed)
	}
	seen := map[string]bool{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		name, at, _ := strings.Cut(strings.TrimPrefix(line, module+"/"), " ")
		if name == "" {
			continue
		}
		name = strings.TrimPrefix(name, module+".")
		if _, ok := testOnly[name]; ok {
			seen[name] = true
			continue
		}
		t.Errorf("%s (%s): no command reaches it: delete it, or move it into a _test.go file of its package if only its tests use it", name, at)
	}
	for name := range testOnly {
		if !seen[name] {
			t.Errorf("testOnly names %s, which deadcode no longer finds: take it off", name)
		}
	}
}

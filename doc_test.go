package ingest_test

import (
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The root package's doc names every package of the module, so that a
// newcomer finds each room from the first page.
func TestDocNamesEveryPackage(t *testing.T) {
	f, err := parser.ParseFile(token.NewFileSet(), "ingest.go", nil, parser.PackageClauseOnly|parser.ParseComments)
	if err != nil {
		t.Fatal(err)
	}
	doc := f.Doc.Text()
	err = filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() || path == "." {
			return err
		}
		if name := d.Name(); name == "testdata" || name == "deploy" || strings.HasPrefix(name, ".") {
			return filepath.SkipDir
		}
		if hasCode(t, path) && !strings.Contains(doc, filepath.ToSlash(path)+"/ ") {
			t.Errorf("the package doc in ingest.go does not name %s/", path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func hasCode(t *testing.T, dir string) bool {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if !strings.HasSuffix(f, "_test.go") {
			return true
		}
	}
	return false
}

// The systemd recipe says how often the shipped timer fires and what each
// firing runs, as deploy/systemd's files say it.
func TestSystemdRecipeSaysTheTimerItShips(t *testing.T) {
	read := func(path string) string {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	const page = "docs/howto/systemd-daemon.md"
	readme, timer, service := read(page), read("deploy/systemd/ingest-once.timer"), read("deploy/systemd/ingest-once.service")
	readme = strings.Join(strings.Fields(readme), " ")
	if !strings.Contains(timer, "OnCalendar=*-*-* *:00/10:00") || !strings.Contains(readme, "the timer fires every 10 minutes") {
		t.Errorf("%s and ingest-once.timer disagree on how often it fires", page)
	}
	if !strings.Contains(service, "ingest run --once --pace --every 1h") || !strings.Contains(readme, "`run --once --pace --every 1h`") {
		t.Errorf("%s and ingest-once.service disagree on what a firing runs", page)
	}
}

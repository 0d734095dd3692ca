package ingest_test

import (
	"bufio"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// module is this module's path: its packages are named in
// docs/ARCHITECTURE.md below it ("root" for the module itself).
const module = "github.com/ingestworks/ingest"

// TestArchitectureIsTheImportGraph holds docs/ARCHITECTURE.md's rooms to
// what `go list` says: every package has its row and no row names a
// package that is not there; a row's imports name exactly the module's
// packages it imports, every other module it imports, and nothing it does
// not import ("the standard library": none but the standard library's).
// cmd/ingest's row, "everything above", is not read.
func TestArchitectureIsTheImportGraph(t *testing.T) {
	graph := importGraph(t)
	rows := architectureRows(t)
	for pkg := range graph {
		if _, ok := rows[pkg]; !ok {
			t.Errorf("docs/ARCHITECTURE.md has no row for the package %s", pkg)
		}
	}
	for pkg, named := range rows {
		imports, ok := graph[pkg]
		if !ok {
			t.Errorf("docs/ARCHITECTURE.md has a row for %s, which `go list` does not know", pkg)
			continue
		}
		if named == "everything above" {
			continue
		}
		for _, problem := range importsDiffer(named, imports) {
			t.Errorf("docs/ARCHITECTURE.md, the row of %s: %s", pkg, problem)
		}
	}
}

// importGraph is every package of the module (tests left out), named as
// the rooms are, with the imports of its non-test files.
func importGraph(t *testing.T) map[string][]string {
	t.Helper()
	out, err := exec.Command("go", "list", "-f", "{{.ImportPath}} {{join .Imports \" \"}}", "./...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	graph := map[string][]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Fields(line)
		graph[room(fields[0])] = fields[1:]
	}
	return graph
}

// room is a package's name in the rooms: "root", "store", "internal/dsn".
func room(path string) string {
	if path == module {
		return "root"
	}
	return strings.TrimPrefix(path, module+"/")
}

// roomRow is a row of the rooms' table: | `pkg/` | what | imports |.
var roomRow = regexp.MustCompile("^\\| `([^`]+)`(?: \\(root\\))? \\|.*\\| ([^|]+) \\|$")

// architectureRows is each row's package and its imports column.
func architectureRows(t *testing.T) map[string]string {
	t.Helper()
	f, err := os.Open("docs/ARCHITECTURE.md")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows := map[string]string{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		m := roomRow.FindStringSubmatch(sc.Text())
		if m == nil {
			continue
		}
		name := strings.TrimSuffix(m[1], "/")
		if name == "ingest" {
			name = "root"
		}
		if _, dup := rows[name]; dup {
			t.Errorf("docs/ARCHITECTURE.md has two rows for %s", name)
		}
		rows[name] = strings.TrimSpace(m[2])
	}
	return rows
}

// importsDiffer says where the imports column named disagrees with
// imports.
func importsDiffer(named string, imports []string) []string {
	var own, others []string
	for _, p := range imports {
		switch {
		case p == module || strings.HasPrefix(p, module+"/"):
			own = append(own, room(p))
		case strings.Contains(strings.Split(p, "/")[0], "."):
			others = append(others, p)
		}
	}
	var problems []string
	if named == "the standard library" {
		if len(own)+len(others) > 0 {
			problems = append(problems, "says the standard library, but imports "+strings.Join(append(own, others...), ", "))
		}
		return problems
	}
	matched := map[string]bool{}
	for _, tok := range strings.Split(named, ", ") {
		tok = strings.TrimSpace(tok)
		switch {
		case slices.Contains(own, tok):
			matched[tok] = true
		case !strings.Contains(strings.Split(tok, "/")[0], ".") && slices.Contains(imports, tok): // the standard library's
		default:
			found := false
			for _, p := range others {
				if strings.Contains(strings.ToLower(p), strings.ToLower(tok)) {
					matched[p], found = true, true
				}
			}
			if !found {
				problems = append(problems, "names "+tok+", which it does not import")
			}
		}
	}
	for _, p := range append(own, others...) {
		if !matched[p] {
			problems = append(problems, "does not name "+p+", which it imports")
		}
	}
	return problems
}

// TestOnlyWiringBuildsTheParts: the composition root is one: the commands
// open no database, the site builds no ledger and the report builds no
// pacer; each comes from wiring, built once for the process.
func TestOnlyWiringBuildsTheParts(t *testing.T) {
	forbidden := map[string][]string{
		"cmd/ingest": {"store.Open", "store.OpenExisting", "ledger.New", "pace.New", "web.New"},
		"web":        {"store.Open", "store.OpenExisting", "ledger.New", "pace.New"},
		"report":     {"store.Open", "store.OpenExisting", "ledger.New", "pace.New"},
	}
	for dir, calls := range forbidden {
		files, err := filepath.Glob(filepath.Join(dir, "*.go"))
		if err != nil {
			t.Fatal(err)
		}
		for _, name := range files {
			if strings.HasSuffix(name, "_test.go") {
				continue
			}
			f, err := parser.ParseFile(token.NewFileSet(), name, nil, 0)
			if err != nil {
				t.Fatal(err)
			}
			ast.Inspect(f, func(n ast.Node) bool {
				sel, ok := n.(*ast.SelectorExpr)
				if !ok {
					return true
				}
				if x, ok := sel.X.(*ast.Ident); ok && slices.Contains(calls, x.Name+"."+sel.Sel.Name) {
					t.Errorf("%s uses %s.%s: only wiring builds it", name, x.Name, sel.Sel.Name)
				}
				return true
			})
		}
	}
}

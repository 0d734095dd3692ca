package ingest_test

import (
	"bufio"
	"go/ast"
	"go/types"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"

	"golang.org/x/tools/go/analysis"
	"golang.org/x/tools/go/packages"

	"github.com/ingestworks/ingest/internal/rig/hostclock"
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

// roomLength is the most a room's row may say: a sentence or two, so
// that the map reads as one; the rest is the package's doc.
const roomLength = 300

// TestRoomsAreShort: each row of the rooms says what lives there in a
// sentence or two.
func TestRoomsAreShort(t *testing.T) {
	b, err := os.ReadFile("docs/ARCHITECTURE.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		m := roomWhat.FindStringSubmatch(line)
		if m != nil && len(m[2]) > roomLength {
			t.Errorf("docs/ARCHITECTURE.md, the row of %s: %d characters, over %d: say it in a sentence or two, the rest in the package's doc",
				m[1], len(m[2]), roomLength)
		}
	}
}

// roomWhat is a row of the rooms with what lives there.
var roomWhat = regexp.MustCompile("^\\| `([^`]+)`(?: \\(root\\))? \\| (.*) \\| [^|]+ \\|$")

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

// room is a package's name in the rooms: "root", "store", "util/envflag".
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

// The claims the map makes that the type checker can hold: a table of
// docs/ARCHITECTURE.md ("What the code holds") names, for each, the rooms
// of which it is true, and the tests below find them in the code.
var claimRow = regexp.MustCompile(`^\| ([A-Za-z' ]+?) \((.*)\) \| (.*) \|$`)

// claims is each claim's rooms as the map's table names them.
func claims(t *testing.T) map[string][]string {
	t.Helper()
	b, err := os.ReadFile("docs/ARCHITECTURE.md")
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]string{}
	for _, line := range strings.Split(string(b), "\n") {
		m := claimRow.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		var rooms []string
		for _, tok := range strings.Split(m[3], ", ") {
			rooms = append(rooms, strings.TrimSuffix(strings.Trim(strings.TrimSpace(tok), "`"), "/"))
		}
		out[m[1]] = rooms
	}
	return out
}

// holdClaim says where the rooms the map names for claim and the rooms
// found differ.
func holdClaim(t *testing.T, claim string, found map[string]bool) {
	t.Helper()
	named, ok := claims(t)[claim]
	if !ok {
		t.Fatalf("docs/ARCHITECTURE.md's table of what the code holds has no row %q", claim)
	}
	for _, r := range named {
		if !found[r] {
			t.Errorf("docs/ARCHITECTURE.md says %s %s: the code says it does not", r, claim)
		}
	}
	for r := range found {
		if !slices.Contains(named, r) {
			t.Errorf("%s does %s: docs/ARCHITECTURE.md does not say so", r, claim)
		}
	}
}

var typed struct {
	once sync.Once
	pkgs []*packages.Package
	err  error
}

// typedPackages is every package of the module, its non-test files parsed
// and type-checked (loadModule), once for every test of the binary.
func typedPackages(t *testing.T) []*packages.Package {
	t.Helper()
	typed.once.Do(func() { typed.pkgs, typed.err = loadModule() })
	if typed.err != nil {
		t.Fatal(typed.err)
	}
	for _, p := range typed.pkgs {
		for _, e := range p.Errors {
			t.Fatalf("%s: %v", p.PkgPath, e)
		}
	}
	return typed.pkgs
}

// rig says whether a room is a test rig (internal/rig/*test), which the
// claims leave out: it starts what tests need as they need it.
func rig(room string) bool {
	return strings.HasPrefix(room, "internal/rig/") && strings.HasSuffix(room, "test")
}

// constructors are the parts' constructors: what builds a database, a
// ledger, a limiter, the upstream's clock, a pacer and a site.
var constructors = map[string][]string{
	"store":  {"Open", "OpenExisting"},
	"ledger": {"New"},
	"quota":  {"NewSQLite", "NewPostgres", "NewRedis", "NewUpstreamClock"},
	"pace":   {"New"},
	"web":    {"New"},
}

// TestWhoBuildsTheParts: the rooms that call a part's constructor, by the
// type checker (a renamed import or a function value counts), are the
// ones the map names: the composition root, built once for the process.
func TestWhoBuildsTheParts(t *testing.T) {
	found := map[string]bool{}
	for _, p := range typedPackages(t) {
		r := room(p.PkgPath)
		if rig(r) {
			continue
		}
		for _, obj := range p.TypesInfo.Uses {
			fn, ok := obj.(*types.Func)
			if !ok || fn.Pkg() == nil || fn.Pkg() == p.Types {
				continue
			}
			if names, ok := constructors[room(fn.Pkg().Path())]; ok && slices.Contains(names, fn.Name()) {
				if fn.Type().(*types.Signature).Recv() == nil {
					found[r] = true
				}
			}
		}
	}
	holdClaim(t, "build the parts", found)
}

// TestWhoReadsTheHostsClock: the rooms besides package clock and the rigs
// that read the host's clock or wait on the runtime's timers, as
// internal/rig/hostclock finds them with no allowlist, are the ones the map
// names.
func TestWhoReadsTheHostsClock(t *testing.T) {
	found := map[string]bool{}
	a := hostclock.New(module, nil)
	for _, p := range typedPackages(t) {
		r := room(p.PkgPath)
		pass := &analysis.Pass{Analyzer: a, Fset: p.Fset, Files: p.Syntax, Pkg: p.Types, TypesInfo: p.TypesInfo,
			TypesSizes: p.TypesSizes, ResultOf: map[*analysis.Analyzer]any{},
			Report: func(analysis.Diagnostic) { found[r] = true }}
		if _, err := a.Run(pass); err != nil {
			t.Fatal(err)
		}
	}
	holdClaim(t, "read the host's clock", found)
}

// sqlPackages are what speaking SQL is: the standard library's interface
// to a database, or a driver.
var sqlPackages = []string{"database/sql", "github.com/jackc/pgx", "modernc.org/sqlite"}

// TestWhoSpeaksSQL: the rooms whose non-test files import database/sql or
// a database's driver, rigs left out, are the ones the map names.
func TestWhoSpeaksSQL(t *testing.T) {
	found := map[string]bool{}
	for _, p := range typedPackages(t) {
		r := room(p.PkgPath)
		if rig(r) {
			continue
		}
		for path := range p.Imports {
			for _, s := range sqlPackages {
				if path == s || strings.HasPrefix(path, s+"/") {
					found[r] = true
				}
			}
		}
	}
	holdClaim(t, "speak SQL", found)
}

// builders are the one function that builds each part, by the
// constructors it calls: the composition root's, in wiring. The rigs
// (internal/rig/*test, internal/rig/yeardb's year of data) build their own.
var builders = map[string]string{
	"store.Open":             "wiring.openDatabase",
	"store.OpenExisting":     "wiring.openDatabase",
	"store.OpenDamaged":      "wiring.Host.Salvage",
	"ledger.New":             "wiring.On",
	"quota.NewSQLite":        "wiring.Database.Limiter",
	"quota.NewPostgres":      "wiring.Database.Limiter",
	"quota.NewRedis":         "wiring.OpenLimiter",
	"quota.NewUpstreamClock": "wiring.Host.UpstreamClock",
	"pace.New":               "wiring.newPacer",
	"web.New":                "wiring.Host.OpenSite",
}

// TestEachPartIsBuiltInOneFunction: every call of a part's constructor
// outside the rigs and the tests, found by the type checker (a renamed
// import or a function value counts), is in the one function the map of
// builders names for it, so that a process opens each part once, where
// one function says how.
func TestEachPartIsBuiltInOneFunction(t *testing.T) {
	for _, p := range typedPackages(t) {
		r := room(p.PkgPath)
		if rig(r) || r == "internal/rig/yeardb" {
			continue
		}
		for _, f := range p.Syntax {
			for _, d := range f.Decls {
				fd, ok := d.(*ast.FuncDecl)
				if !ok || fd.Body == nil {
					continue
				}
				in := r + "." + funcName(fd)
				ast.Inspect(fd.Body, func(n ast.Node) bool {
					id, ok := n.(*ast.Ident)
					if !ok {
						return true
					}
					fn, ok := p.TypesInfo.Uses[id].(*types.Func)
					if !ok || fn.Pkg() == nil || fn.Pkg() == p.Types || fn.Type().(*types.Signature).Recv() != nil {
						return true
					}
					part := room(fn.Pkg().Path()) + "." + fn.Name()
					if want, ok := builders[part]; ok && want != in {
						t.Errorf("%s: %s calls %s, which only %s may: the part is built in one function",
							p.Fset.Position(id.Pos()), in, part, want)
					}
					return true
				})
			}
		}
	}
}

// funcName is a function's name, its receiver's type first for a method.
func funcName(fd *ast.FuncDecl) string {
	if fd.Recv == nil || len(fd.Recv.List) == 0 {
		return fd.Name.Name
	}
	t := fd.Recv.List[0].Type
	if s, ok := t.(*ast.StarExpr); ok {
		t = s.X
	}
	if id, ok := t.(*ast.Ident); ok {
		return id.Name + "." + fd.Name.Name
	}
	return fd.Name.Name
}

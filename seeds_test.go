package ingest_test

import (
	"bufio"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// seedsDoc is where every test that draws randomness is listed with how
// its seed is chosen in make test.
const seedsDoc = "docs/testing.md"

// TestEveryRandomDrawIsListed: every file of a test (a _test.go file, or
// a test rig under internal/rig/) that draws randomness is a row of
// docs/testing.md's seeds table, naming how make test chooses its seeds,
// and every row is such a file; and no function takes a seed from the
// clock, so that make test decides the same on every run of a commit. A
// new test that draws is red here until it takes a fixed seed and is
// listed.
func TestEveryRandomDrawIsListed(t *testing.T) {
	t.Parallel()
	drawn, clocked := randomDraws(t, ".")
	listed := seedRows(t)
	for _, d := range drawn {
		if _, ok := listed[d]; !ok {
			t.Errorf("%s draws randomness and is not in %s's seeds table: give it a fixed seed in make test (internal/rig/seedtest) and a row saying how it is chosen", d, seedsDoc)
		}
	}
	for d := range listed {
		if !slices.Contains(drawn, d) {
			t.Errorf("%s, a row of %s's seeds table, draws no randomness (or is gone): take its row out", d, seedsDoc)
		}
	}
	for _, c := range clocked {
		t.Errorf("%s takes a seed from the clock: make test must decide the same on every run; take it from internal/rig/seedtest", c)
	}
}

// randomDraws walks the tree under root and gives each file of a test or
// a test rig that uses math/rand, math/rand/v2 or crypto/rand, and each
// function ("path Func") that takes a seed from the clock.
func randomDraws(t *testing.T, root string) (drawn, clocked []string) {
	t.Helper()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "testdata" || d.Name() == "node_modules" || strings.HasPrefix(d.Name(), ".")) && path != root {
			return filepath.SkipDir
		}
		rig := strings.HasPrefix(filepath.ToSlash(path), "internal/rig/")
		if d.IsDir() || !strings.HasSuffix(path, ".go") || !(strings.HasSuffix(path, "_test.go") || rig) {
			return nil
		}
		if filepath.ToSlash(path) == "internal/rig/seedtest/seedtest.go" {
			return nil // the one place a seed is drawn from the kernel
		}
		d2, c2, err := drawsIn(path)
		drawn, clocked = append(drawn, d2...), append(clocked, c2...)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(drawn)
	return drawn, clocked
}

// drawsIn is randomDraws for one file.
func drawsIn(path string) (drawn, clocked []string, err error) {
	f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.SkipObjectResolution)
	if err != nil {
		return nil, nil, err
	}
	names := map[string]bool{}
	for _, im := range f.Imports {
		p, _ := strconv.Unquote(im.Path.Value)
		if p != "math/rand" && p != "math/rand/v2" && p != "crypto/rand" {
			continue
		}
		name := "rand"
		if im.Name != nil {
			name = im.Name.Name
		}
		names[name] = true
	}
	for _, decl := range f.Decls {
		fn, ok := decl.(*ast.FuncDecl)
		if !ok {
			continue
		}
		draws, clock := false, false
		seedy := strings.Contains(strings.ToLower(fn.Name.Name), "seed")
		ast.Inspect(fn, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.SelectorExpr:
				if x, ok := n.X.(*ast.Ident); ok && names[x.Name] {
					draws = true
				}
			case *ast.CallExpr:
				// rand.NewPCG(uint64(time.Now().UnixNano()), ...), or a
				// seed's function reading the clock at all.
				if sel, ok := n.Fun.(*ast.SelectorExpr); ok {
					if x, ok := sel.X.(*ast.Ident); ok && names[x.Name] && slices.ContainsFunc(n.Args, func(a ast.Expr) bool { return readsClock(a) }) {
						clock = true
					}
				}
				if seedy && readsClock(n) {
					clock = true
				}
			}
			return true
		})
		if draws {
			drawn = append(drawn, filepath.ToSlash(path))
		}
		if clock || (draws && nanosOfNow(fn)) {
			clocked = append(clocked, filepath.ToSlash(path)+" "+funcName(fn))
		}
	}
	slices.Sort(drawn)
	drawn = slices.Compact(drawn)
	return drawn, clocked, nil
}

// readsClock says whether n calls time.Now anywhere inside it.
func readsClock(n ast.Node) bool {
	found := false
	ast.Inspect(n, func(n ast.Node) bool {
		if sel, ok := n.(*ast.SelectorExpr); ok {
			if x, ok := sel.X.(*ast.Ident); ok && x.Name == "time" && sel.Sel.Name == "Now" {
				found = true
			}
		}
		return !found
	})
	return found
}

// nanosOfNow says whether fn takes time.Now().UnixNano(), the clock's
// usual way into a seed.
func nanosOfNow(fn *ast.FuncDecl) bool {
	found := false
	ast.Inspect(fn, func(n ast.Node) bool {
		if sel, ok := n.(*ast.SelectorExpr); ok && sel.Sel.Name == "UnixNano" {
			if call, ok := sel.X.(*ast.CallExpr); ok && readsClock(call) {
				found = true
			}
		}
		return !found
	})
	return found
}

// seedRow is a row of the seeds table: | `path` | how make test seeds it |.
var seedRow = regexp.MustCompile("^\\| `([^`]+\\.go)` \\| ([^|]+) \\|$")

// seedRows is the seeds table's rows, a file to how make test chooses
// its seeds.
func seedRows(t *testing.T) map[string]string {
	t.Helper()
	f, err := os.Open(seedsDoc)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows := map[string]string{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		if m := seedRow.FindStringSubmatch(sc.Text()); m != nil {
			rows[m[1]] = strings.TrimSpace(m[2])
		}
	}
	if len(rows) == 0 {
		t.Fatalf("%s: no seeds table (| `path` | its seed in make test |)", seedsDoc)
	}
	return rows
}

//go:build ignore

// testcounts prints, for each package of the module (deploy/ included),
// how many test functions, t.Run sites and assertion calls (Error, Errorf,
// Fatal, Fatalf on a *testing.T or *testing.B, whatever it is named) its
// _test.go files hold, then the totals: a change that makes the suite
// cheaper can show with it that it dropped no check.
//
//	go run scripts/testcounts.go [dir]
package main

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

type counts struct{ tests, runs, asserts int }

func main() {
	root := "."
	if len(os.Args) > 1 {
		root = os.Args[1]
	}
	by := map[string]*counts{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if n := d.Name(); path != root && (strings.HasPrefix(n, ".") || n == "testdata" || n == "node_modules") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, 0)
		if err != nil {
			return err
		}
		dir := filepath.Dir(path)
		c := by[dir]
		if c == nil {
			c = &counts{}
			by[dir] = c
		}
		count(f, c)
		return nil
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, "testcounts:", err)
		os.Exit(1)
	}
	dirs := make([]string, 0, len(by))
	for d := range by {
		dirs = append(dirs, d)
	}
	sort.Strings(dirs)
	var all counts
	fmt.Printf("%-28s %6s %6s %8s\n", "package", "tests", "t.Run", "asserts")
	for _, d := range dirs {
		c := by[d]
		fmt.Printf("%-28s %6d %6d %8d\n", d, c.tests, c.runs, c.asserts)
		all.tests += c.tests
		all.runs += c.runs
		all.asserts += c.asserts
	}
	fmt.Printf("%-28s %6d %6d %8d\n", "total", all.tests, all.runs, all.asserts)
}

// count adds f's test functions (TestX(t *testing.T)), its calls of a
// method Run whose last argument is a function of one *testing.T, and its
// calls of Error, Errorf, Fatal and Fatalf on a selector (t.Errorf,
// s.t.Fatal): a fixture's own Error method is not one of them unless it
// takes the same shape, which no fixture here does.
func count(f *ast.File, c *counts) {
	for _, decl := range f.Decls {
		fn, ok := decl.(*ast.FuncDecl)
		if ok && fn.Recv == nil && strings.HasPrefix(fn.Name.Name, "Test") && fn.Name.Name != "TestMain" && takesT(fn.Type) {
			c.tests++
		}
	}
	ast.Inspect(f, func(n ast.Node) bool {
		call, ok := n.(*ast.CallExpr)
		if !ok {
			return true
		}
		sel, ok := call.Fun.(*ast.SelectorExpr)
		if !ok {
			return true
		}
		switch sel.Sel.Name {
		case "Run":
			if len(call.Args) == 2 {
				if lit, ok := call.Args[1].(*ast.FuncLit); ok && takesT(lit.Type) {
					c.runs++
				} else if _, ok := call.Args[1].(*ast.Ident); ok {
					c.runs++ // t.Run(name, fn) with fn a named test body
				}
			}
		case "Error", "Errorf", "Fatal", "Fatalf":
			if isTesting(sel.X) {
				c.asserts++
			}
		}
		return true
	})
}

// takesT is whether a function's one parameter is a *testing.T or *testing.B.
func takesT(ft *ast.FuncType) bool {
	if ft.Params == nil || len(ft.Params.List) != 1 {
		return false
	}
	star, ok := ft.Params.List[0].Type.(*ast.StarExpr)
	if !ok {
		return false
	}
	sel, ok := star.X.(*ast.SelectorExpr)
	if !ok {
		return false
	}
	pkg, ok := sel.X.(*ast.Ident)
	return ok && pkg.Name == "testing" && (sel.Sel.Name == "T" || sel.Sel.Name == "B")
}

// isTesting is whether x names a test's handle as the tests here name it:
// t, tb, b, or a field t of something (s.t).
func isTesting(x ast.Expr) bool {
	switch x := x.(type) {
	case *ast.Ident:
		return x.Name == "t" || x.Name == "tb" || x.Name == "b"
	case *ast.SelectorExpr:
		return x.Sel.Name == "t" || x.Sel.Name == "tb"
	}
	return false
}

package wiring_test

// The roles callers depend on stay small: no interface in quota/ or jobs/
// has more than 5 methods, embedded interfaces counted.
// `go test -v -run TestRolesAreSmall ./wiring/` lists every one.

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

const maxRole = 5

func TestRolesAreSmall(t *testing.T) {
	ifaces := map[string]*ast.InterfaceType{} // "pkg.Name"
	for _, pkg := range []string{"quota", "jobs"} {
		files, err := filepath.Glob(filepath.Join("..", pkg, "*.go"))
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range files {
			file, err := parser.ParseFile(token.NewFileSet(), f, nil, 0)
			if err != nil {
				t.Fatal(err)
			}
			ast.Inspect(file, func(n ast.Node) bool {
				if ts, ok := n.(*ast.TypeSpec); ok {
					if it, ok := ts.Type.(*ast.InterfaceType); ok {
						ifaces[pkg+"."+ts.Name.Name] = it
					}
				}
				return true
			})
		}
	}
	var methods func(pkg string, it *ast.InterfaceType) map[string]bool
	methods = func(pkg string, it *ast.InterfaceType) map[string]bool {
		out := map[string]bool{}
		for _, m := range it.Methods.List {
			for _, n := range m.Names {
				out[n.Name] = true
			}
			var embedded string
			switch e := m.Type.(type) {
			case *ast.Ident:
				embedded = pkg + "." + e.Name
			case *ast.SelectorExpr:
				embedded = e.X.(*ast.Ident).Name + "." + e.Sel.Name
			}
			if inner, ok := ifaces[embedded]; ok && len(m.Names) == 0 {
				for k := range methods(strings.Split(embedded, ".")[0], inner) {
					out[k] = true
				}
			}
		}
		return out
	}
	names := make([]string, 0, len(ifaces))
	for n := range ifaces {
		names = append(names, n)
	}
	sort.Strings(names)
	if len(names) < 20 {
		t.Fatalf("found %d interfaces in quota/ and jobs/: the packages moved?", len(names))
	}
	for _, n := range names {
		k := len(methods(strings.Split(n, ".")[0], ifaces[n]))
		t.Logf("%2d %s", k, n)
		if k > maxRole {
			t.Errorf("%s has %d methods: a caller depends on more than it uses (at most %d)", n, k, maxRole)
		}
	}
}

package ingest_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"

	"golang.org/x/tools/go/packages"
)

// The module's packages type-checked from their source, once per test
// binary (typedPackages), for the claims the map makes. go/packages would
// ask `go list -export` for every package, the module's own included, and
// so compile the whole module each time one of its files changes, only to
// read the export data of the packages it then checks from source anyway.
// Here only the packages outside the module (the standard library's and
// the other modules', which change with go.mod alone) are read from their
// export data; the module's own are parsed and checked here, in the order
// they import each other.

// listed is a package as `go list -json` says it.
type listed struct {
	ImportPath string
	Name       string
	Dir        string
	GoFiles    []string
	Imports    []string
	ImportMap  map[string]string
	Export     string
	Module     *struct{ GoVersion string }
	Error      *struct{ Err string }
}

// goList is what `go list -e -json` says of the packages args name.
func goList(args ...string) ([]*listed, error) {
	cmd := exec.Command("go", append([]string{"list", "-e", "-json=ImportPath,Name,Dir,GoFiles,Imports,ImportMap,Export,Module,Error"}, args...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("go list: %v: %s", err, stderr.Bytes())
	}
	var ps []*listed
	for dec := json.NewDecoder(bytes.NewReader(out)); dec.More(); {
		p := new(listed)
		if err := dec.Decode(p); err != nil {
			return nil, fmt.Errorf("go list: %w", err)
		}
		ps = append(ps, p)
	}
	return ps, nil
}

// own says whether path is one of this module's packages.
func own(path string) bool { return path == module || strings.HasPrefix(path, module+"/") }

// loadModule is every package of the module, its non-test files parsed
// and type-checked, as packages.Load would give them with the same mode.
func loadModule() ([]*packages.Package, error) {
	all, err := goList("-deps", "./...")
	if err != nil {
		return nil, err
	}
	mine := map[string]*listed{}
	var others []string
	for _, p := range all {
		switch {
		case own(p.ImportPath):
			mine[p.ImportPath] = p
		case p.ImportPath != "unsafe" && p.ImportPath != "C":
			others = append(others, p.ImportPath)
		}
	}
	exported, err := goList(append([]string{"-export"}, others...)...)
	if err != nil {
		return nil, err
	}
	export := map[string]string{}
	for _, p := range exported {
		export[p.ImportPath] = p.Export
	}
	fset := token.NewFileSet()
	l := &loader{fset: fset, mine: mine, exported: exportedBy(fset, export),
		typed: map[string]*packages.Package{}, sizes: types.SizesFor("gc", runtime.GOARCH)}
	var out []*packages.Package
	for _, p := range all {
		if own(p.ImportPath) {
			out = append(out, l.check(p.ImportPath))
		}
	}
	return out, nil
}

// loader checks the module's packages from source and reads the others'
// export data, each once.
type loader struct {
	fset     *token.FileSet
	mine     map[string]*listed
	exported types.Importer // the packages outside the module, each read once, so that each is one *types.Package
	typed    map[string]*packages.Package
	sizes    types.Sizes
}

// check is the module's package path, checked after what it imports.
func (l *loader) check(path string) *packages.Package {
	if p, ok := l.typed[path]; ok {
		return p
	}
	lp := l.mine[path]
	p := &packages.Package{ID: path, Name: lp.Name, PkgPath: path, Fset: l.fset, TypesSizes: l.sizes,
		Imports: map[string]*packages.Package{}}
	l.typed[path] = p
	if lp.Error != nil {
		p.Errors = append(p.Errors, packages.Error{Msg: lp.Error.Err, Kind: packages.ListError})
	}
	for _, imp := range lp.Imports {
		if own(imp) {
			p.Imports[imp] = l.check(imp)
		} else {
			p.Imports[imp] = &packages.Package{ID: imp, PkgPath: imp}
		}
	}
	for _, f := range lp.GoFiles {
		name := filepath.Join(lp.Dir, f)
		p.GoFiles, p.CompiledGoFiles = append(p.GoFiles, name), append(p.CompiledGoFiles, name)
		file, err := parser.ParseFile(l.fset, name, nil, parser.ParseComments|parser.SkipObjectResolution)
		if err != nil {
			p.Errors = append(p.Errors, packages.Error{Msg: err.Error(), Kind: packages.ParseError})
			continue
		}
		p.Syntax = append(p.Syntax, file)
	}
	p.TypesInfo = &types.Info{Types: map[ast.Expr]types.TypeAndValue{}, Defs: map[*ast.Ident]types.Object{},
		Uses: map[*ast.Ident]types.Object{}, Implicits: map[ast.Node]types.Object{}, Instances: map[*ast.Ident]types.Instance{},
		Scopes: map[ast.Node]*types.Scope{}, Selections: map[*ast.SelectorExpr]*types.Selection{}, FileVersions: map[*ast.File]string{}}
	conf := types.Config{Sizes: l.sizes, Importer: importerFunc(func(imp string) (*types.Package, error) { return l.importPath(lp, imp) }),
		Error: func(err error) {
			p.Errors = append(p.Errors, packages.Error{Msg: err.Error(), Kind: packages.TypeError})
		}}
	if lp.Module != nil && lp.Module.GoVersion != "" {
		conf.GoVersion = "go" + lp.Module.GoVersion
	}
	p.Types, _ = conf.Check(path, l.fset, p.Syntax, p.TypesInfo)
	return p
}

// importPath is the package imp, imported by from.
func (l *loader) importPath(from *listed, imp string) (*types.Package, error) {
	if m, ok := from.ImportMap[imp]; ok {
		imp = m
	}
	switch {
	case imp == "unsafe":
		return types.Unsafe, nil
	case own(imp):
		if p := l.check(imp); p.Types != nil {
			return p.Types, nil
		}
		return nil, fmt.Errorf("%s did not type-check", imp)
	}
	return l.exported.Import(imp)
}

// exportedBy is the compiler's importer reading each package's export data
// from the file `go list -export` names. gcexportdata.Read takes the
// export tool's files alone, which `go list -export` writes only from Go
// 1.28 on: before, the file is the compiler's archive, which the standard
// library's importer reads as well.
func exportedBy(fset *token.FileSet, export map[string]string) types.Importer {
	return importer.ForCompiler(fset, "gc", func(path string) (io.ReadCloser, error) {
		file := export[path]
		if file == "" {
			return nil, fmt.Errorf("no export data for %s", path)
		}
		return os.Open(file)
	})
}

type importerFunc func(path string) (*types.Package, error)

func (f importerFunc) Import(path string) (*types.Package, error) { return f(path) }

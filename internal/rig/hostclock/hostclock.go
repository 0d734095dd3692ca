// Package hostclock is the check that no part reads or waits on the
// host's clock behind the house clock's back (docs/ARCHITECTURE.md, One
// clock): an analyzer that refuses, in every non-test file of the module,
// a use of the package time's functions that read the host's clock or
// wait on the runtime's timers, outside package clock, the test rigs
// (internal/rig/*test) and the few places allowed in allow.go, each with its
// reason. `make lint` runs it over the module (TestModuleReadsNoHostClock).
package hostclock

import (
	"go/ast"
	"go/types"
	"path"
	"strings"

	"golang.org/x/tools/go/analysis"
)

// Module is this module's path: rooms are named below it.
const Module = "github.com/ingestworks/ingest"

// Refused are the package time's functions that read the host's clock
// (Now, Since, Until) or wait on the runtime's timers: what a part does
// through package clock instead.
var Refused = []string{"Now", "Since", "Until", "After", "AfterFunc", "NewTimer", "NewTicker", "Tick", "Sleep"}

// Analyzer is the check over this module with its allowlist.
var Analyzer = New(Module, Allowed)

// New is the check over the module at module: a use of a Refused function
// in a package (named below module, "root" for the module itself, as the
// rooms are) or a file ("store/db.go") that allow names is let be.
func New(module string, allow map[string]string) *analysis.Analyzer {
	return &analysis.Analyzer{
		Name: "hostclock",
		Doc:  "refuses reading the host's clock or waiting on the runtime's timers outside package clock, the test rigs and the allowlist",
		URL:  "docs/ARCHITECTURE.md",
		Run:  func(pass *analysis.Pass) (any, error) { return nil, run(pass, module, allow) },
	}
}

func run(pass *analysis.Pass, module string, allow map[string]string) error {
	room := Room(module, pass.Pkg.Path())
	if Exempt(room) || allow[room] != "" {
		return nil
	}
	for _, f := range pass.Files {
		name := pass.Fset.File(f.Pos()).Name()
		if strings.HasSuffix(name, "_test.go") || allow[room+"/"+path.Base(name)] != "" {
			continue
		}
		ast.Inspect(f, func(n ast.Node) bool {
			id, ok := n.(*ast.Ident)
			if !ok {
				return true
			}
			if fn := refused(pass.TypesInfo.Uses[id]); fn != "" {
				pass.Reportf(id.Pos(), "time.%s reads the host's clock: read the house clock handed in (package clock), or name this file in internal/rig/hostclock/allow.go with why", fn)
			}
			return true
		})
	}
	return nil
}

// refused is the name of the Refused function obj is, or "".
func refused(obj types.Object) string {
	fn, ok := obj.(*types.Func)
	if !ok || fn.Pkg() == nil || fn.Pkg().Path() != "time" {
		return ""
	}
	if sig, ok := fn.Type().(*types.Signature); !ok || sig.Recv() != nil {
		return "" // a method: t.Sub, d.Round
	}
	for _, name := range Refused {
		if fn.Name() == name {
			return name
		}
	}
	return ""
}

// Room is a package's name in the rooms: "root", "store", "util/envflag";
// a package outside module keeps its path.
func Room(module, pkg string) string {
	if pkg == module {
		return "root"
	}
	return strings.TrimPrefix(pkg, module+"/")
}

// Exempt says whether a room may read the host's clock by what it is:
// package clock, which is the house clock, and the test rigs
// (internal/rig/*test), which start servers and wait for them on the host.
func Exempt(room string) bool {
	return room == "clock" || strings.HasPrefix(room, "internal/") && strings.HasSuffix(room, "test")
}

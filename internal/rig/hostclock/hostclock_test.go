package hostclock_test

import (
	"go/token"
	"path"
	"strings"
	"testing"

	"golang.org/x/tools/go/analysis"
	"golang.org/x/tools/go/analysis/analysistest"
	"golang.org/x/tools/go/packages"

	"github.com/ingestworks/ingest/internal/rig/hostclock"
)

// TestAnalyzerRefusesTheHostsClock: each refused function, under any
// import name, is reported outside clock, the rigs, test files and an
// allowed file; what only computes with times is not.
func TestAnalyzerRefusesTheHostsClock(t *testing.T) {
	a := hostclock.New("example.com/m", map[string]string{"allowed/one.go": "a planted entry"})
	analysistest.Run(t, analysistest.TestData(), a,
		"example.com/m/a", "example.com/m/b", "example.com/m/clock", "example.com/m/internal/rigtest", "example.com/m/allowed")
}

// TestModuleReadsNoHostClock is the check `make lint` runs: no package of
// the module reads the host's clock or waits on the runtime's timers but
// package clock, the rigs and the allowlist.
func TestModuleReadsNoHostClock(t *testing.T) {
	for _, d := range findings(t, hostclock.Analyzer) {
		t.Error(d)
	}
}

// TestAllowlistIsNeeded: every entry of the allowlist lets be a use the
// check would report, so that the list says only what is true.
func TestAllowlistIsNeeded(t *testing.T) {
	used := map[string]bool{}
	for _, d := range findings(t, hostclock.New(hostclock.Module, nil)) {
		used[d.room], used[d.room+"/"+path.Base(d.file)] = true, true
	}
	for entry, why := range hostclock.Allowed {
		if !used[entry] {
			t.Errorf("allow.go lets %s read the host's clock (%s), but it does not: remove the entry", entry, why)
		}
		if strings.TrimSpace(why) == "" {
			t.Errorf("allow.go's entry %s says no reason", entry)
		}
	}
}

type finding struct {
	room, file string
	pos        token.Position
	msg        string
}

func (f finding) String() string { return f.pos.String() + ": " + f.msg }

// findings runs a over the module's packages (their non-test files), as
// the type checker sees them.
func findings(t *testing.T, a *analysis.Analyzer) []finding {
	t.Helper()
	cfg := &packages.Config{Dir: "../../..", Mode: packages.NeedName | packages.NeedFiles | packages.NeedSyntax |
		packages.NeedTypes | packages.NeedTypesInfo | packages.NeedTypesSizes}
	pkgs, err := packages.Load(cfg, "./...")
	if err != nil {
		t.Fatal(err)
	}
	var out []finding
	for _, p := range pkgs {
		for _, e := range p.Errors {
			t.Errorf("%s: %v", p.PkgPath, e)
		}
		pass := &analysis.Pass{Analyzer: a, Fset: p.Fset, Files: p.Syntax, Pkg: p.Types, TypesInfo: p.TypesInfo,
			TypesSizes: p.TypesSizes, ResultOf: map[*analysis.Analyzer]any{},
			Report: func(d analysis.Diagnostic) {
				pos := p.Fset.Position(d.Pos)
				out = append(out, finding{room: hostclock.Room(hostclock.Module, p.PkgPath), file: pos.Filename, pos: pos, msg: d.Message})
			}}
		if _, err := a.Run(pass); err != nil {
			t.Fatalf("%s: %v", p.PkgPath, err)
		}
	}
	if len(pkgs) < 10 {
		t.Fatalf("loaded %d packages: the module's were not found", len(pkgs))
	}
	return out
}

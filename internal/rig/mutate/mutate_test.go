package main

import (
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"slices"
	"strings"
	"testing"
)

// fixture holds one site of each operator's kinds.
const fixture = `package fix

import (
	"errors"
	"time"
)

type pool struct {
	units, calls int
	loc          *time.Location
}

func over(p pool, limit int) bool {
	return p.units > limit
}

func spend(p *pool, n int) error {
	if n == 0 {
		return errors.New("nothing")
	}
	p.units += n
	note(p)
	return nil
}

func note(p *pool) {}

func day(p pool, t time.Time) time.Time {
	wait := 5 * time.Second
	_ = wait
	return time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, p.loc).In(time.UTC)
}

func local(p pool, t time.Time) time.Time { return t.In(p.loc) }

func window(a, b time.Time) time.Duration { return b.Sub(a) }

func late(a, b time.Time) time.Duration { return window(a, b) }

func first(a, b int) bool { return a < b }
`

// sites is the fixture's sites, type-checked.
func sites(t *testing.T) []Mutant {
	t.Helper()
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "fix.go", fixture, parser.ParseComments)
	if err != nil {
		t.Fatal(err)
	}
	info := &types.Info{Types: map[ast.Expr]types.TypeAndValue{}, Uses: map[*ast.Ident]types.Object{}, Defs: map[*ast.Ident]types.Object{}}
	pkg, err := (&types.Config{Importer: importer.Default()}).Check("fix", fset, []*ast.File{f}, info)
	if err != nil {
		t.Fatal(err)
	}
	return Sites(file{fset: fset, ast: f, src: []byte(fixture), info: info, pkg: pkg, name: "fix/fix.go", path: "example/fix"})
}

// TestEachOperatorMakesItsChange: each operator's mutant of the fixture
// is the change it names, spliced at its place, and nothing else.
func TestEachOperatorMakesItsChange(t *testing.T) {
	want := []struct{ op, line string }{
		{opBoundary, "return p.units >= limit"},
		{opBoundary, "if n == 1 {"},
		{opBoundary, "return a <= b }"},
		{opNegate, "if !(n == 0) {"},
		{opDrop, "- return errors.New(\"nothing\")"},
		{opDrop, "- p.units += n"},
		{opDrop, "- note(p)"},
		{opUnit, "return p.calls > limit"},
		{opUnit, "wait := 5 * time.Minute"},
		{opUnit, "wait := 5 * time.Millisecond"},
		{opZone, "return time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, time.UTC).In(time.UTC)"},
		{opZone, `.In(func() *time.Location { l, _ := time.LoadLocation("America/Los_Angeles"); return l }())`},
		{opZone, "return t.UTC() }"},
		{opSwap, "return window(b, a) }"},
	}
	var got []string
	for _, m := range sites(t) {
		out, err := m.Splice([]byte(fixture))
		if err != nil {
			t.Fatal(err)
		}
		line := lineAt(out, m.Offset)
		if m.New == "" {
			line = "- " + strings.TrimSpace(m.Old)
		}
		got = append(got, m.Op+": "+line)
	}
	for _, w := range want {
		if !slices.ContainsFunc(got, func(g string) bool { return strings.HasPrefix(g, w.op+": ") && strings.Contains(g, w.line) }) {
			t.Errorf("no %s mutant gives %q; the fixture's mutants:\n%s", w.op, w.line, strings.Join(got, "\n"))
		}
	}
	for _, g := range got {
		if strings.Contains(g, "return nil") && strings.HasPrefix(g, opDrop) {
			t.Errorf("a return of nil was dropped: %s", g)
		}
	}
}

// TestADrawFromASeedIsReplayed: the same seed draws the same mutants,
// another seed others, and only sites a profile says ran are drawn.
func TestADrawFromASeedIsReplayed(t *testing.T) {
	all := sites(t)
	a, b := Draw(all, nil, 7, 5), Draw(all, nil, 7, 5)
	if !slices.Equal(a, b) || len(a) != 5 {
		t.Fatalf("seed 7 drew %v, then %v", a, b)
	}
	if slices.Equal(a, Draw(all, nil, 8, 5)) {
		t.Errorf("seeds 7 and 8 drew the same five mutants")
	}
	ran := Ran{}
	// Only over's body ran (lines 13 to 15 of the fixture).
	if err := ran.ReadCover(strings.NewReader("mode: set\nexample/fix/fix.go:13.39,15.2 1 1\nexample/fix/fix.go:17.38,24.2 3 0\n")); err != nil {
		t.Fatal(err)
	}
	for _, m := range Draw(all, ran, 7, len(all)) {
		if m.Line != 14 {
			t.Errorf("drew %s:%d %s, on a line that never ran", m.File, m.Line, m.Op)
		}
	}
	if n := len(Draw(all, ran, 7, len(all))); n != 2 {
		t.Errorf("drew %d of the sites that ran, want the 2 of line 14 (> moved, units traded for calls)", n)
	}
}

// TestAKeptMutantIsAppliedWhereItsLineMoved: a mutant drawn on a tree is
// applied on a later one where lines were added above its site, and is
// refused where its text is gone or stands at two places as near.
func TestAKeptMutantIsAppliedWhereItsLineMoved(t *testing.T) {
	src := "package p\n\nfunc f(n int) bool {\n\treturn n > 0\n}\n"
	m := Mutant{File: "p.go", Line: 4, Offset: strings.Index(src, "n > 0"), Old: "n > 0", New: "n >= 0"}
	moved := "package p\n\n// f says whether n counts.\n// It is kept short.\nfunc f(n int) bool {\n\treturn n > 0\n}\n"
	out, err := m.Splice([]byte(moved))
	if err != nil || !strings.Contains(string(out), "return n >= 0") || strings.Contains(string(out), "n > 0") {
		t.Fatalf("applied on a tree with two lines above it: %q, %v", out, err)
	}
	if _, err := m.Splice([]byte(strings.ReplaceAll(moved, "n > 0", "n != 0"))); err == nil || !strings.Contains(err.Error(), "draw again") {
		t.Errorf("applied where its text is gone: %v", err)
	}
	twice := []byte(strings.Repeat(".", m.Offset+20))
	copy(twice[m.Offset-3:], "n > 0")
	copy(twice[m.Offset+3:], "n > 0")
	if _, err := m.Splice(twice); err == nil {
		t.Errorf("applied where its text stands at two places as near: %q", twice)
	}
}

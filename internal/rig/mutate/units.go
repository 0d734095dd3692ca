package main

import (
	"go/ast"
	"go/types"
	"strings"
)

// loaded is a location loaded as the product loads the pools' day, which
// stands for time.UTC in a zone mutant: the Pacific day, the upstream's.
const loaded = `func() *time.Location { l, _ := time.LoadLocation("America/Los_Angeles"); return l }()`

// neighbours is each duration unit's mutants: the unit next to it.
var neighbours = map[string][]string{
	"Nanosecond":  {"Microsecond"},
	"Microsecond": {"Millisecond"},
	"Millisecond": {"Second"},
	"Second":      {"Millisecond", "Minute"},
	"Minute":      {"Second", "Hour"},
	"Hour":        {"Minute"},
}

// timeName lists time.UTC as a loaded location and a duration unit as
// its neighbours.
func (s *lister) timeName(sel *ast.SelectorExpr) {
	if !s.isPackage(sel.X, "time") {
		return
	}
	if sel.Sel.Name == "UTC" {
		s.add(opZone, sel.Pos(), sel.End(), loaded)
	}
	for _, to := range neighbours[sel.Sel.Name] {
		s.add(opUnit, sel.Sel.Pos(), sel.Sel.End(), to)
	}
}

// isPackage: x names the imported package path.
func (s *lister) isPackage(x ast.Expr, path string) bool {
	id, ok := x.(*ast.Ident)
	if !ok {
		return false
	}
	pn, ok := s.info.Uses[id].(*types.PkgName)
	return ok && pn.Imported().Path() == path
}

// inZone lists a time read in a location as read in UTC instead: t.In(loc)
// as t.UTC(), and time.Date's location, when it is not time.UTC, as
// time.UTC.
func (s *lister) inZone(c *ast.CallExpr) {
	sel, ok := c.Fun.(*ast.SelectorExpr)
	if !ok {
		return
	}
	if s.isPackage(sel.X, "time") {
		if sel.Sel.Name == "Date" && len(c.Args) == 8 && s.text(c.Args[7]) != "time.UTC" {
			s.add(opZone, c.Args[7].Pos(), c.Args[7].End(), "time.UTC")
		}
		return
	}
	if sel.Sel.Name != "In" || len(c.Args) != 1 || !isTime(s.info.TypeOf(sel.X)) {
		return
	}
	s.add(opZone, sel.Sel.Pos(), c.End(), "UTC()")
}

func isTime(t types.Type) bool {
	n, ok := t.(*types.Named)
	return ok && n.Obj().Pkg() != nil && n.Obj().Pkg().Path() == "time" && n.Obj().Name() == "Time"
}

// traded is the name units and calls are traded to in name, or "".
func traded(name string) string {
	for _, p := range [][2]string{{"units", "calls"}, {"Units", "Calls"}, {"calls", "units"}, {"Calls", "Units"}} {
		if strings.Contains(name, p[0]) {
			return strings.Replace(name, p[0], p[1], 1)
		}
	}
	return ""
}

// unitsOrCalls lists a variable or a field whose name says units (or
// calls) traded for its namesake in calls (or units), where that exists
// with the same type: the two counts a plan, a ledger and the upstream
// keep side by side, which are easy to mix up.
func (s *lister) unitsOrCalls(id *ast.Ident, sel *ast.SelectorExpr) {
	to := traded(id.Name)
	v, ok := s.info.Uses[id].(*types.Var)
	if to == "" || !ok {
		return
	}
	var other types.Object
	if sel == nil {
		if v.IsField() || v.Parent() == nil {
			return
		}
		_, other = v.Parent().LookupParent(to, id.Pos())
	} else {
		if !v.IsField() {
			return
		}
		other, _, _ = types.LookupFieldOrMethod(s.info.TypeOf(sel.X), true, s.pkg, to)
	}
	if ov, ok := other.(*types.Var); ok && types.Identical(ov.Type(), v.Type()) {
		s.add(opUnit, id.Pos(), id.End(), to)
	}
}

// swaps lists each two adjacent arguments of one type traded, in a call
// of a function (not a conversion, not a builtin) where they differ.
func (s *lister) swaps(c *ast.CallExpr) {
	if c.Ellipsis.IsValid() || len(c.Args) < 2 {
		return
	}
	if tv, ok := s.info.Types[c.Fun]; ok && (tv.IsType() || tv.IsBuiltin()) {
		return
	}
	for i := 0; i+1 < len(c.Args); i++ {
		a, b := c.Args[i], c.Args[i+1]
		ta, tb := s.info.TypeOf(a), s.info.TypeOf(b)
		if ta == nil || tb == nil || !types.Identical(ta, tb) || s.text(a) == s.text(b) {
			continue
		}
		between := string(s.src[s.fset.Position(a.End()).Offset:s.fset.Position(b.Pos()).Offset])
		s.add(opSwap, a.Pos(), b.End(), s.text(b)+between+s.text(a))
	}
}

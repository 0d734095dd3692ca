package main

import (
	"go/ast"
	"go/token"
	"go/types"
	"strconv"
	"strings"
)

// The operators, as the table names them.
const (
	opBoundary = "boundary" // < and <=, > and >= traded, an integer constant moved by one
	opNegate   = "negate"   // an if's or a for's condition negated
	opDrop     = "drop"     // an assignment, a call statement or a return of an error dropped
	opZone     = "zone"     // time.UTC and a loaded location traded
	opUnit     = "unit"     // a duration unit moved to its neighbour, units and calls traded
	opSwap     = "swap"     // two adjacent arguments of the same type traded
)

// Mutant is one change to one file: the text from Offset, Old, becomes
// New. A splice rather than a rewritten tree, so the file keeps its
// comments and layout and the change reads as one line of a diff.
type Mutant struct {
	File   string // module-relative, slash-separated
	Pkg    string // the package's import path, as a coverage profile names it
	Line   int
	Col    int
	Offset int
	Op     string
	Old    string
	New    string
}

// file is one parsed, type-checked file to list sites in.
type file struct {
	fset *token.FileSet
	ast  *ast.File
	src  []byte
	info *types.Info
	pkg  *types.Package
	name string // module-relative
	path string // the package's import path
}

// Sites is every mutant the operators make of f, in the file's order.
func Sites(f file) []Mutant {
	s := &lister{file: f}
	for _, d := range f.ast.Decls {
		if fd, ok := d.(*ast.FuncDecl); ok && fd.Body != nil {
			s.fun(fd.Type, fd.Body)
		}
	}
	return s.out
}

// lister walks one file's function bodies; sig is the innermost
// function's signature, which a return of an error is read against.
type lister struct {
	file
	out []Mutant
	sig *ast.FuncType
}

// fun lists the sites of a function's body, function literals in it with
// their own signature.
func (s *lister) fun(sig *ast.FuncType, body *ast.BlockStmt) {
	outer := s.sig
	s.sig = sig
	defer func() { s.sig = outer }()
	ast.Inspect(body, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.FuncLit:
			s.fun(n.Type, n.Body)
			return false
		case *ast.BinaryExpr:
			s.boundary(n)
		case *ast.BasicLit:
			s.constant(n)
		case *ast.IfStmt:
			s.negate(n.Cond)
		case *ast.ForStmt:
			if n.Cond != nil {
				s.negate(n.Cond)
			}
		case *ast.BlockStmt:
			s.drops(n.List, n == body)
		case *ast.CaseClause:
			s.drops(n.Body, false)
		case *ast.CommClause:
			s.drops(n.Body, false)
		case *ast.SelectorExpr:
			s.timeName(n)
			s.unitsOrCalls(n.Sel, n)
		case *ast.Ident:
			s.unitsOrCalls(n, nil)
		case *ast.CallExpr:
			s.inZone(n)
			s.swaps(n)
		}
		return true
	})
}

// add records a mutant replacing the text from pos to end.
func (s *lister) add(op string, pos, end token.Pos, repl string) {
	p := s.fset.Position(pos)
	old := string(s.src[p.Offset:s.fset.Position(end).Offset])
	if old == repl {
		return
	}
	s.out = append(s.out, Mutant{File: s.name, Pkg: s.path, Line: p.Line, Col: p.Column, Offset: p.Offset, Op: op, Old: old, New: repl})
}

// text is a node's source.
func (s *lister) text(n ast.Node) string {
	return string(s.src[s.fset.Position(n.Pos()).Offset:s.fset.Position(n.End()).Offset])
}

// moved is each comparison's neighbour by one.
var moved = map[token.Token]token.Token{token.LSS: token.LEQ, token.LEQ: token.LSS, token.GTR: token.GEQ, token.GEQ: token.GTR}

func (s *lister) boundary(b *ast.BinaryExpr) {
	if to, ok := moved[b.Op]; ok {
		s.add(opBoundary, b.OpPos, b.OpPos+token.Pos(len(b.Op.String())), to.String())
	}
}

func (s *lister) constant(l *ast.BasicLit) {
	if l.Kind != token.INT {
		return
	}
	v, err := strconv.ParseInt(strings.ReplaceAll(l.Value, "_", ""), 0, 64)
	if err != nil {
		return
	}
	s.add(opBoundary, l.Pos(), l.End(), strconv.FormatInt(v+1, 10))
	if v > 0 {
		s.add(opBoundary, l.Pos(), l.End(), strconv.FormatInt(v-1, 10))
	}
}

func (s *lister) negate(cond ast.Expr) {
	s.add(opNegate, cond.Pos(), cond.End(), "!("+s.text(cond)+")")
}

// drops lists each statement of a list that can go alone: a call
// statement, an assignment to what exists already, and a return of an
// error that is not the function's last statement (dropped, the function
// would not compile, and that is no mutant).
func (s *lister) drops(list []ast.Stmt, fnBody bool) {
	for i, st := range list {
		switch st := st.(type) {
		case *ast.ExprStmt:
			if _, ok := st.X.(*ast.CallExpr); ok {
				s.add(opDrop, st.Pos(), st.End(), "")
			}
		case *ast.AssignStmt:
			if st.Tok != token.DEFINE {
				s.add(opDrop, st.Pos(), st.End(), "")
			}
		case *ast.IncDecStmt:
			s.add(opDrop, st.Pos(), st.End(), "")
		case *ast.ReturnStmt:
			if !(fnBody && i == len(list)-1) && s.returnsAnError(st) {
				s.add(opDrop, st.Pos(), st.End(), "")
			}
		}
	}
}

// returnsAnError: the function's last result is an error and the return
// gives one that is not nil.
func (s *lister) returnsAnError(r *ast.ReturnStmt) bool {
	if s.sig == nil || s.sig.Results == nil || len(r.Results) == 0 {
		return false
	}
	fields := s.sig.Results.List
	if id, ok := fields[len(fields)-1].Type.(*ast.Ident); !ok || id.Name != "error" {
		return false
	}
	last, ok := r.Results[len(r.Results)-1].(*ast.Ident)
	return !ok || last.Name != "nil"
}

package metrics

import (
	"flag"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "write the table of every series in docs/reference/metrics.md")

const (
	referencePage = "../docs/reference/metrics.md"
	tableBegin    = "<!-- every series: metrics.TestMetricsReference -->\n"
	tableEnd      = "<!-- end of every series -->"
)

// declaredSeries is one series as this package declares it.
type declaredSeries struct{ name, kind, labels, help string }

// declared is every series the package's files declare, read from their
// source: each prometheus.NewDesc and each prometheus.New* given options,
// with its help and labels as the code spells them.
func declared(t *testing.T) []declaredSeries {
	t.Helper()
	fset := token.NewFileSet()
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	var parsed []*ast.File
	consts := map[string]ast.Expr{}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		file, err := parser.ParseFile(fset, f, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		parsed = append(parsed, file)
		ast.Inspect(file, func(n ast.Node) bool {
			if vs, ok := n.(*ast.ValueSpec); ok {
				for i, id := range vs.Names {
					if i < len(vs.Values) {
						consts[id.Name] = vs.Values[i]
					}
				}
			}
			return true
		})
	}
	str := func(e ast.Expr) string { return stringOf(t, e, consts) }
	seen := map[string]bool{}
	var out []declaredSeries
	for _, file := range parsed {
		ast.Inspect(file, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			sel, ok := call.Fun.(*ast.SelectorExpr)
			if !ok || !strings.HasPrefix(sel.Sel.Name, "New") || fmt.Sprint(sel.X) != "prometheus" || len(call.Args) == 0 {
				return true
			}
			var s declaredSeries
			if sel.Sel.Name == "NewDesc" {
				s = declaredSeries{name: str(call.Args[0]), help: str(call.Args[1]), labels: labelsOf(t, call.Args[2], str), kind: "gauge"}
				if strings.HasSuffix(s.name, "_total") {
					s.kind = "counter"
				}
			} else if opts, ok := call.Args[0].(*ast.CompositeLit); ok {
				s.kind = strings.ToLower(strings.TrimSuffix(strings.TrimSuffix(strings.TrimPrefix(sel.Sel.Name, "New"), "Vec"), "Func"))
				for _, el := range opts.Elts {
					kv := el.(*ast.KeyValueExpr)
					switch fmt.Sprint(kv.Key) {
					case "Name":
						s.name = str(kv.Value)
					case "Help":
						s.help = str(kv.Value)
					case "ConstLabels":
						for _, l := range kv.Value.(*ast.CompositeLit).Elts {
							s.labels = str(l.(*ast.KeyValueExpr).Key)
						}
					}
				}
				if len(call.Args) > 1 && strings.HasSuffix(sel.Sel.Name, "Vec") {
					s.labels = labelsOf(t, call.Args[1], str)
				}
			}
			if s.name != "" && !seen[s.name] {
				seen[s.name] = true
				out = append(out, s)
			}
			return true
		})
	}
	slices.SortFunc(out, func(a, b declaredSeries) int { return strings.Compare(a.name, b.name) })
	return out
}

// stringOf is the value of a string the code spells as a literal, a sum
// of them, or a constant of the package.
func stringOf(t *testing.T, e ast.Expr, consts map[string]ast.Expr) string {
	t.Helper()
	switch e := e.(type) {
	case *ast.BasicLit:
		s, err := strconv.Unquote(e.Value)
		if err != nil {
			t.Fatal(err)
		}
		return s
	case *ast.BinaryExpr:
		return stringOf(t, e.X, consts) + stringOf(t, e.Y, consts)
	case *ast.Ident:
		if v, ok := consts[e.Name]; ok {
			return stringOf(t, v, consts)
		}
	}
	t.Fatalf("a series' name or help the test cannot read: %T %v", e, e)
	return ""
}

func labelsOf(t *testing.T, e ast.Expr, str func(ast.Expr) string) string {
	t.Helper()
	lit, ok := e.(*ast.CompositeLit)
	if !ok {
		return ""
	}
	var out []string
	for _, l := range lit.Elts {
		out = append(out, str(l))
	}
	return strings.Join(out, ", ")
}

// referenceTable is the table docs/reference/metrics.md lists every
// series in.
func referenceTable(all []declaredSeries) string {
	var b strings.Builder
	b.WriteString("| series | type | labels | what it counts |\n|---|---|---|---|\n")
	for _, s := range all {
		labels := "(none)"
		if s.labels != "" {
			labels = "`" + strings.ReplaceAll(s.labels, ", ", "`, `") + "`"
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s | %s |\n", s.name, s.kind, labels, strings.ReplaceAll(s.help, "|", "\\|"))
	}
	return b.String()
}

// Every series this package declares is in docs/reference/metrics.md's
// table, with its type, labels and help as the code has them, and the
// table lists no other: a series added, renamed or reworded in the code
// and not in the page fails here. -update writes the table.
func TestMetricsReference(t *testing.T) {
	all := declared(t)
	if len(all) < 30 {
		t.Fatalf("read %d series from the package: the walk missed some", len(all))
	}
	b, err := os.ReadFile(referencePage)
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	i, j := strings.Index(doc, tableBegin), strings.Index(doc, tableEnd)
	if i < 0 || j < i {
		t.Fatalf("docs/reference/metrics.md has no table between %q and %q", tableBegin, tableEnd)
	}
	want := referenceTable(all)
	if *update {
		doc = doc[:i+len(tableBegin)] + want + doc[j:]
		if err := os.WriteFile(referencePage, []byte(doc), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if got := doc[i+len(tableBegin) : j]; got != want {
		t.Errorf("docs/reference/metrics.md's table of every series is not the code's: run `go test ./metrics -run TestMetricsReference -update`; want\n%s", want)
	}
}

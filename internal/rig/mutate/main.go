// Command mutate draws the mutants `make sim-mutants` tries on the
// simulation, besides the history's list: it lists every site where an
// operator changes the product's code (a boundary moved by one, a
// condition negated, a statement dropped, a zone or a unit swapped, two
// arguments of one type traded), keeps those on statements a coverage
// profile of the simulation says ran (a mutant on a line the simulation
// never runs is no miss of its checker's), and draws a sample from a seed:
// the same tree, profile and seed draw the same mutants. Each is a splice
// of one file's text, applied alone to a scratch copy of the tree.
//
//	go run ./internal/rig/mutate draw -seed N -n 25 -out DIR [-cover PROFILE]... PACKAGE...
//	go run ./internal/rig/mutate apply DIR/MUTANT ROOT
//
// draw writes each mutant to DIR as a file of its own and prints a line a
// mutant: its id, file:line, operator and the line it changes; apply
// changes the copy of the tree at ROOT by one of them.
package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/tools/go/packages"
)

func main() {
	if len(os.Args) < 2 {
		fail(errors.New("usage: mutate draw|apply (and their arguments)"))
	}
	var err error
	switch os.Args[1] {
	case "draw":
		err = draw(os.Args[2:])
	case "apply":
		if len(os.Args) != 4 {
			fail(errors.New("usage: mutate apply MUTANT ROOT"))
		}
		err = apply(os.Args[2], os.Args[3])
	default:
		err = fmt.Errorf("mutate: %q is not draw or apply", os.Args[1])
	}
	if err != nil {
		fail(err)
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, err)
	os.Exit(2)
}

// covers is the -cover flag: profiles, one or more.
type covers []string

func (c *covers) String() string     { return strings.Join(*c, ",") }
func (c *covers) Set(v string) error { *c = append(*c, v); return nil }

func draw(args []string) error {
	fs := flag.NewFlagSet("draw", flag.ContinueOnError)
	seed := fs.Uint64("seed", 0, "the seed the sample is drawn from")
	n := fs.Int("n", 25, "how many mutants to draw")
	out := fs.String("out", "", "the folder each mutant is written to")
	var profiles covers
	fs.Var(&profiles, "cover", "a coverage profile of the simulation: only sites on statements it ran are drawn (repeatable)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *out == "" || fs.NArg() == 0 {
		return errors.New("mutate draw: -out and at least one package are needed")
	}
	sites, err := list(fs.Args())
	if err != nil {
		return err
	}
	var ran Ran
	if len(profiles) > 0 {
		ran = Ran{}
		for _, p := range profiles {
			if err := readProfile(ran, p); err != nil {
				return err
			}
		}
		kept := 0
		for _, m := range sites {
			if ran.Covers(m) {
				kept++
			}
		}
		fmt.Printf("sites: %d in %s; %d on statements the simulation ran\n", len(sites), strings.Join(fs.Args(), " "), kept)
	} else {
		fmt.Printf("sites: %d in %s (no coverage profile: every one may be drawn)\n", len(sites), strings.Join(fs.Args(), " "))
	}
	return write(Draw(sites, ran, *seed, *n), *out)
}

func readProfile(ran Ran, name string) error {
	f, err := os.Open(name)
	if err != nil {
		return fmt.Errorf("mutate draw: -cover: %w", err)
	}
	defer f.Close()
	return ran.ReadCover(f)
}

// write puts each mutant in dir and prints its line of the table.
func write(drawn []Mutant, dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for i, m := range drawn {
		id := fmt.Sprintf("m%02d", i+1)
		b, err := json.Marshal(m)
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(dir, id), b, 0o644); err != nil {
			return err
		}
		diff, err := diffLine(m)
		if err != nil {
			return err
		}
		fmt.Printf("%s\t%s:%d\t%s\t%s\n", id, m.File, m.Line, m.Op, diff)
	}
	return nil
}

// list is every site in the packages' files (tests left out).
func list(patterns []string) ([]Mutant, error) {
	root, err := os.Getwd()
	if err != nil {
		return nil, err
	}
	mode := packages.NeedName | packages.NeedFiles | packages.NeedSyntax | packages.NeedTypes | packages.NeedTypesInfo
	pkgs, err := packages.Load(&packages.Config{Mode: mode}, patterns...)
	if err != nil {
		return nil, fmt.Errorf("mutate draw: load: %w", err)
	}
	var sites []Mutant
	for _, p := range pkgs {
		if len(p.Errors) > 0 {
			return nil, fmt.Errorf("mutate draw: %s: %v", p.PkgPath, p.Errors[0])
		}
		for _, f := range p.Syntax {
			name := p.Fset.Position(f.Pos()).Filename
			src, err := os.ReadFile(name)
			if err != nil {
				return nil, err
			}
			rel, err := filepath.Rel(root, name)
			if err != nil {
				return nil, err
			}
			sites = append(sites, Sites(file{fset: p.Fset, ast: f, src: src, info: p.TypesInfo, pkg: p.Types,
				name: filepath.ToSlash(rel), path: p.PkgPath})...)
		}
	}
	return sites, nil
}

// apply splices the mutant written at name into the tree at root.
func apply(name, root string) error {
	b, err := os.ReadFile(name)
	if err != nil {
		return err
	}
	var m Mutant
	if err := json.Unmarshal(b, &m); err != nil {
		return fmt.Errorf("mutate apply: %s: %w", name, err)
	}
	target := filepath.Join(root, filepath.FromSlash(m.File))
	src, err := os.ReadFile(target)
	if err != nil {
		return err
	}
	out, err := m.Splice(src)
	if err != nil {
		return err
	}
	return os.WriteFile(target, out, 0o644)
}

// Splice is src with m applied. Where lines were added or removed above
// it since the draw, m's old text is found at the place of its kind
// nearest to where it was, so that a kept draw is judged again on a later
// tree; an error when src holds it nowhere, or at two places as near.
func (m Mutant) Splice(src []byte) ([]byte, error) {
	at, err := m.find(src)
	if err != nil {
		return nil, err
	}
	out := append([]byte{}, src[:at]...)
	out = append(out, m.New...)
	return append(out, src[at+len(m.Old):]...), nil
}

// find is where m's old text is in src: at m.Offset, else the nearest place
// that holds it.
func (m Mutant) find(src []byte) (int, error) {
	if end := m.Offset + len(m.Old); end <= len(src) && string(src[m.Offset:end]) == m.Old {
		return m.Offset, nil
	}
	best, tie := -1, false
	for from := 0; ; {
		i := bytes.Index(src[from:], []byte(m.Old))
		if i < 0 {
			break
		}
		i += from
		switch d, bd := abs(i-m.Offset), abs(best-m.Offset); {
		case best < 0 || d < bd:
			best, tie = i, false
		case d == bd:
			tie = true
		}
		from = i + 1
	}
	if best < 0 || tie {
		return 0, fmt.Errorf("mutate apply: %s:%d does not hold %q, nor one place nearest it: draw again on this tree", m.File, m.Line, m.Old)
	}
	return best, nil
}

func abs(n int) int { return max(n, -n) }

// diffLine is the line m changes, as a diff says it: "- " and the old
// statement's first line for a drop, "+ " and the new line otherwise.
func diffLine(m Mutant) (string, error) {
	src, err := os.ReadFile(m.File)
	if err != nil {
		return "", err
	}
	if m.New == "" {
		return "- " + strings.TrimSpace(strings.SplitN(m.Old, "\n", 2)[0]), nil
	}
	out, err := m.Splice(src)
	if err != nil {
		return "", err
	}
	return "+ " + lineAt(out, m.Offset), nil
}

// lineAt is the line of src holding offset, trimmed.
func lineAt(src []byte, offset int) string {
	start := strings.LastIndexByte(string(src[:offset]), '\n') + 1
	end := strings.IndexByte(string(src[offset:]), '\n')
	if end < 0 {
		end = len(src) - offset
	}
	return strings.TrimSpace(string(src[start : offset+end]))
}

package main

import (
	"bufio"
	"fmt"
	"io"
	"math/rand/v2"
	"path"
	"slices"
	"strings"
)

// block is a run of statements of a coverage profile that ran.
type block struct{ l0, c0, l1, c1 int }

// Ran is the blocks of a coverage profile that ran, by file as the
// profile names it (import path and base name).
type Ran map[string][]block

// ReadCover adds the blocks that ran of a profile (go test -coverprofile)
// to r.
func (r Ran) ReadCover(in io.Reader) error {
	sc := bufio.NewScanner(in)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "mode:") || line == "" {
			continue
		}
		var b block
		var stmts, count int
		colon := strings.LastIndex(line, ":")
		if colon < 0 {
			return fmt.Errorf("coverage profile: %q is not a block", line)
		}
		if _, err := fmt.Sscanf(line[colon+1:], "%d.%d,%d.%d %d %d", &b.l0, &b.c0, &b.l1, &b.c1, &stmts, &count); err != nil {
			return fmt.Errorf("coverage profile: %q: %w", line, err)
		}
		if count > 0 {
			r[line[:colon]] = append(r[line[:colon]], b)
		}
	}
	return sc.Err()
}

// Covers: m's first character is in a block that ran.
func (r Ran) Covers(m Mutant) bool {
	for _, b := range r[m.Pkg+"/"+path.Base(m.File)] {
		after := m.Line > b.l0 || (m.Line == b.l0 && m.Col >= b.c0)
		before := m.Line < b.l1 || (m.Line == b.l1 && m.Col < b.c1)
		if after && before {
			return true
		}
	}
	return false
}

// Draw is n of the sites that ran, drawn from seed: every site in a
// shuffle from the seed, in the sites' own order, the first n that ran
// kept. A site's place in the shuffle does not hang on which others ran,
// so a profile that differs by a line changes the draw by a mutant, not
// all of it.
func Draw(sites []Mutant, ran Ran, seed uint64, n int) []Mutant {
	order := slices.Clone(sites)
	rand.New(rand.NewPCG(seed, seed^0x6d75746174650000)).Shuffle(len(order), func(i, j int) {
		order[i], order[j] = order[j], order[i]
	})
	var out []Mutant
	for _, m := range order {
		if len(out) == n {
			break
		}
		if ran == nil || ran.Covers(m) {
			out = append(out, m)
		}
	}
	return out
}

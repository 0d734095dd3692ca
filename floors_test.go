package ingest_test

import (
	"bufio"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// floorRow is a row of the floors' table: | floor | `room`, `room` |.
var floorRow = regexp.MustCompile("^\\| ([0-9]+) \\| (`.*`) \\|$")

// besideRow is a row of the arrows beside: | `from` → `to` | why |.
var besideRow = regexp.MustCompile("^\\| `([^`]+)` → `([^`]+)` \\| (.+) \\|$")

// floorsMap is docs/ARCHITECTURE.md's floors: each room's floor, the top
// floor, and the arrows beside with why each stays.
func floorsMap(t *testing.T) (floors map[string]int, top int, beside map[string]string) {
	t.Helper()
	f, err := os.Open("docs/ARCHITECTURE.md")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	floors, beside = map[string]int{}, map[string]string{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		if m := floorRow.FindStringSubmatch(sc.Text()); m != nil {
			n, _ := strconv.Atoi(m[1])
			top = max(top, n)
			for _, r := range strings.Split(m[2], ", ") {
				r = strings.Trim(r, "`")
				if _, dup := floors[r]; dup {
					t.Errorf("docs/ARCHITECTURE.md puts %s on two floors", r)
				}
				floors[r] = n
			}
		}
		if m := besideRow.FindStringSubmatch(sc.Text()); m != nil {
			beside[m[1]+" → "+m[2]] = m[3]
		}
	}
	if len(floors) == 0 {
		t.Fatal("docs/ARCHITECTURE.md has no floors (| floor | `room`, ... |)")
	}
	return floors, top, beside
}

// TestArrowsRunDown: every package of the module stands on a floor of
// docs/ARCHITECTURE.md, and each of its imports of the module's packages
// runs down to a lower floor, or beside it on the same floor where the
// map says why; never up. The top floor (the commands and the rigs) may
// import itself. Every arrow beside the map names is in the code. The
// folders stand as drawn: the rigs (internal/rig/) on the top floor, the
// product's helpers (the rest of internal/) below the adapters. An adapter
// imports the root and its own folder's packages alone.
func TestArrowsRunDown(t *testing.T) {
	floors, top, beside := floorsMap(t)
	holdFolders(t, floors, top)
	used := map[string]bool{}
	for pkg, imports := range importGraph(t) {
		holdAdapter(t, pkg, imports)
		from, ok := floors[pkg]
		if !ok {
			t.Errorf("docs/ARCHITECTURE.md puts %s on no floor", pkg)
			continue
		}
		for _, p := range imports {
			if p != module && !strings.HasPrefix(p, module+"/") {
				continue
			}
			to, arrow := floors[room(p)], pkg+" → "+room(p)
			switch {
			case to < from || from == top:
			case to == from && beside[arrow] != "":
				used[arrow] = true
			case to == from:
				t.Errorf("%s imports %s beside it on floor %d, which docs/ARCHITECTURE.md does not say why: move the type to the room that owns it, or say why the arrow stays", pkg, room(p), from)
			default:
				t.Errorf("%s (floor %d) imports %s (floor %d): an arrow that runs up; move the type to the room that owns it", pkg, from, room(p), to)
			}
		}
	}
	for arrow := range beside {
		if !used[arrow] {
			t.Errorf("docs/ARCHITECTURE.md says why %s stays, and the code has no such arrow beside: take its row out", arrow)
		}
	}
}

// holdFolders: every rig stands on the top floor, above all it drives, so
// that nothing shipped can import one; every helper of the product stands
// below the adapters' floor, so that any room may call it.
func holdFolders(t *testing.T, floors map[string]int, top int) {
	t.Helper()
	for r, n := range floors {
		switch {
		case strings.HasPrefix(r, "internal/rig/") && n != top:
			t.Errorf("docs/ARCHITECTURE.md puts the rig %s on floor %d: a rig stands on the top floor (%d), above all it drives", r, n, top)
		case strings.HasPrefix(r, "util/") && n >= floors["store"]:
			t.Errorf("docs/ARCHITECTURE.md puts the helper %s on floor %d: a helper of the product stands below the adapters (floor %d); a rig goes under internal/rig/", r, n, floors["store"])
		case strings.HasPrefix(r, "internal/") && !strings.HasPrefix(r, "internal/rig/"):
			t.Errorf("%s stands under internal/ but not under internal/rig/: a rig goes under internal/rig/, a helper of the product under util/", r)
		}
	}
}

// adapters are the rooms of one technology each (the ledger is the
// limiter's tables beside the store): what more than one of them needs is
// the root's, what is one technology's stays in its adapter, so that an
// adapter can be read, and replaced, standing on the root alone.
var adapters = []string{"quota", "fetch", "store", "ledger"}

// holdAdapter: an adapter imports no package of the module but the root.
func holdAdapter(t *testing.T, pkg string, imports []string) {
	t.Helper()
	if !slices.Contains(adapters, pkg) {
		return
	}
	for _, p := range imports {
		if !strings.HasPrefix(p, module+"/") {
			continue
		}
		t.Errorf("the adapter %s imports %s: an adapter imports the root and its own technology alone; "+
			"move what every part speaks to the root, what is one technology's to its adapter, or hand it in from wiring", pkg, room(p))
	}
}

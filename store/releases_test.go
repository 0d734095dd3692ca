package store

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// release is a row of migrations/releases.txt.
type release struct {
	version          string
	sqlite, postgres int
	unreleased       bool
}

// releases reads migrations/releases.txt.
func releases(t *testing.T) []release {
	t.Helper()
	data, err := os.ReadFile("migrations/releases.txt")
	if err != nil {
		t.Fatal(err)
	}
	var rs []release
	for i, line := range strings.Split(string(data), "\n") {
		f := strings.Fields(line)
		if len(f) == 0 || strings.HasPrefix(f[0], "#") {
			continue
		}
		var r release
		var err1, err2 error
		if len(f) >= 3 {
			r.version = f[0]
			r.sqlite, err1 = strconv.Atoi(f[1])
			r.postgres, err2 = strconv.Atoi(f[2])
			r.unreleased = len(f) == 4 && f[3] == "unreleased"
		}
		if len(f) < 3 || len(f) > 4 || err1 != nil || err2 != nil || len(f) == 4 && !r.unreleased || !semver.MatchString(r.version) {
			t.Fatalf("migrations/releases.txt:%d: %q, want VERSION SQLITE POSTGRES [unreleased]", i+1, line)
		}
		rs = append(rs, r)
	}
	return rs
}

var semver = regexp.MustCompile(`^([0-9]+)\.([0-9]+)\.([0-9]+)$`)

// before says whether version a precedes b.
func before(a, b string) bool {
	x, y := semver.FindStringSubmatch(a), semver.FindStringSubmatch(b)
	for i := 1; i <= 3; i++ {
		m, _ := strconv.Atoi(x[i])
		n, _ := strconv.Atoi(y[i])
		if m != n {
			return m < n
		}
	}
	return false
}

// TestReleasesNameTheSchema: a schema step is a version step. The last
// row of migrations/releases.txt writes the steps the migrations/ files
// build; a released row (the file VERSION's, and those before it) never
// changes, so a step added after a release needs a row of the next,
// unreleased version; and every schema number the docs quote is a step
// both databases name alike, or a release's.
func TestReleasesNameTheSchema(t *testing.T) {
	rs := releases(t)
	data, err := os.ReadFile("../VERSION")
	if err != nil {
		t.Fatal(err)
	}
	current := strings.TrimSpace(string(data))
	last := rs[len(rs)-1]
	if last.sqlite != SchemaVersion || last.postgres != PGSchemaVersion {
		next := last.version
		if !last.unreleased {
			next = "the next version's, marked unreleased"
		}
		t.Errorf("migrations/releases.txt: the last row (%s) writes SQLite %d, PostgreSQL %d, but the migrations build %d and %d: "+
			"a schema step is a version step; set the row of %s to %d %d",
			last.version, last.sqlite, last.postgres, SchemaVersion, PGSchemaVersion, next, SchemaVersion, PGSchemaVersion)
	}
	sawCurrent := false
	for i, r := range rs {
		if i > 0 {
			p := rs[i-1]
			if !before(p.version, r.version) || r.sqlite < p.sqlite || r.postgres < p.postgres {
				t.Errorf("migrations/releases.txt: %s after %s: versions rise, and steps never fall", r.version, p.version)
			}
			if r.sqlite == p.sqlite && r.postgres == p.postgres && r.unreleased {
				t.Errorf("migrations/releases.txt: %s, unreleased, adds no step to %s: drop its row", r.version, p.version)
			}
		}
		switch {
		case r.version == current && r.unreleased:
			t.Errorf("migrations/releases.txt: %s is VERSION, released, but its row says unreleased", r.version)
		case r.version == current:
			sawCurrent = true
		case sawCurrent && !r.unreleased:
			t.Errorf("migrations/releases.txt: %s comes after VERSION (%s) and is not marked unreleased", r.version, current)
		case !sawCurrent && r.unreleased:
			t.Errorf("migrations/releases.txt: %s, before VERSION (%s), is marked unreleased", r.version, current)
		}
	}
	if !sawCurrent {
		t.Errorf("migrations/releases.txt has no row for VERSION %s", current)
	}
	checkDocsSchemaNumbers(t, rs)
}

// A schema number quoted in the docs: "SQLite schema 19, PostgreSQL step
// 12", "SQLite step 25, PostgreSQL step 18", "(schema 19, PostgreSQL step
// 12)".
var quotedSteps = regexp.MustCompile(`(?:SQLite )?(?:schema|step) (\d+)(?: and|,) PostgreSQL step (\d+)`)

// checkDocsSchemaNumbers holds each pair of steps docs/ and CHANGELOG.md
// quote to a release's row or to a step of the same name in both
// sequences (the step a change came with); a line that says "this
// version" or "this binary" quotes the tree's own.
func checkDocsSchemaNumbers(t *testing.T, rs []release) {
	t.Helper()
	named := func(n, m int) bool {
		if n < 1 || m < 1 || n > len(sqliteMigrations) || m > len(pgMigrations) {
			return false
		}
		a, b := sqliteMigrations[n-1].name, pgMigrations[m-1].name
		return a[strings.Index(a, "_"):] == b[strings.Index(b, "_"):]
	}
	var files []string
	filepath.WalkDir("../docs", func(path string, d os.DirEntry, err error) error {
		if err == nil && strings.HasSuffix(path, ".md") {
			files = append(files, path)
		}
		return nil
	})
	files = append(files, "../CHANGELOG.md")
	checked := 0
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		// Paragraphs, so that a pair wrapped over two lines is read whole.
		for _, para := range strings.Split(string(data), "\n\n") {
			para = strings.Join(strings.Fields(para), " ")
			for _, m := range quotedSteps.FindAllStringSubmatch(para, -1) {
				n, _ := strconv.Atoi(m[1])
				p, _ := strconv.Atoi(m[2])
				checked++
				ok := named(n, p)
				for _, r := range rs {
					ok = ok || r.sqlite == n && r.postgres == p
				}
				if !ok {
					t.Errorf("%s quotes %q: neither a release's steps (migrations/releases.txt) nor one step both databases name alike", f, m[0])
				}
				lower := strings.ToLower(para)
				if (strings.Contains(lower, "this version") || strings.Contains(lower, "this binary")) &&
					(n != SchemaVersion || p != PGSchemaVersion) {
					t.Errorf("%s quotes %q as this version's: the tree's are SQLite %d, PostgreSQL %d", f, m[0], SchemaVersion, PGSchemaVersion)
				}
			}
		}
	}
	if checked == 0 {
		t.Errorf("no schema numbers found in docs/ and CHANGELOG.md: the pattern no longer reads them")
	}
}

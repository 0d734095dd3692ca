package ingest_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// The limits of a docs page: a page a reader finishes, a table cell a
// reader takes in at a glance.
const (
	maxPageLines = 400
	maxCellWords = 60
)

// docPages are the Markdown pages a reader is sent to: README.md, every
// page under docs/ and the deploy directories' READMEs.
func docPages(t *testing.T) []string {
	t.Helper()
	pages := []string{"README.md"}
	for _, root := range []string{"docs", "deploy"} {
		err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if !d.IsDir() && strings.HasSuffix(path, ".md") {
				pages = append(pages, filepath.ToSlash(path))
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return pages
}

// prose is a page's text outside its fenced blocks, line by line.
func prose(text string) []string {
	var out []string
	fenced := false
	for _, line := range strings.Split(text, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			fenced = !fenced
			continue
		}
		if !fenced {
			out = append(out, line)
		}
	}
	return out
}

func readPage(t *testing.T, page string) string {
	t.Helper()
	b, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// No page is longer than a reader finishes, and no table cell holds more
// than a sentence or two: a longer page is split by what its reader came
// to do (docs/README.md), a longer cell is said below the table.
func TestDocsPagesAreShort(t *testing.T) {
	pages := docPages(t)
	if len(pages) < 40 {
		t.Fatalf("found %d pages: the walk missed docs/", len(pages))
	}
	for _, page := range pages {
		text := readPage(t, page)
		if n := strings.Count(text, "\n"); n > maxPageLines {
			t.Errorf("%s: %d lines, over %d: split it by kind (docs/README.md)", page, n, maxPageLines)
		}
		for _, line := range prose(text) {
			if !strings.HasPrefix(strings.TrimSpace(line), "|") {
				continue
			}
			for _, cell := range strings.Split(strings.Trim(strings.TrimSpace(line), "|"), "|") {
				if n := len(strings.Fields(cell)); n > maxCellWords {
					t.Errorf("%s, the table's line %q...: a cell of %d words, over %d: say it below the table", page, firstWords(cell, 8), n, maxCellWords)
				}
			}
		}
	}
}

func firstWords(s string, n int) string {
	f := strings.Fields(s)
	if len(f) > n {
		f = f[:n]
	}
	return strings.Join(f, " ")
}

var (
	linkRE    = regexp.MustCompile(`\]\(([^)\s]+)\)`)
	headingRE = regexp.MustCompile(`^#{1,6} +(.*?) *#*$`)
)

// anchors are the fragments a page's headings answer to, as GitHub makes
// them: lower case, punctuation dropped, spaces as hyphens, a repeated
// heading numbered.
func anchors(text string) map[string]bool {
	out := map[string]bool{}
	seen := map[string]int{}
	for _, line := range prose(text) {
		m := headingRE.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		var b strings.Builder
		for _, r := range strings.ToLower(m[1]) {
			switch {
			case r == ' ' || r == '-':
				b.WriteRune('-')
			case r == '_' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r > 127 && !strings.ContainsRune("—–’“”…·", r):
				b.WriteRune(r)
			}
		}
		slug := b.String()
		if n := seen[slug]; n > 0 {
			out[slug+"-"+strconv.Itoa(n)] = true
		} else {
			out[slug] = true
		}
		seen[slug]++
	}
	return out
}

// Every link between the pages reaches a file that exists and, when it
// names a section, a heading of that page: a page split or a heading
// renamed cannot leave a reader at a dead link.
func TestDocsLinksResolve(t *testing.T) {
	for _, page := range docPages(t) {
		text := readPage(t, page)
		for _, line := range prose(text) {
			for _, m := range linkRE.FindAllStringSubmatch(line, -1) {
				target := m[1]
				if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
					continue
				}
				file, frag, _ := strings.Cut(target, "#")
				dest := page
				if file != "" {
					dest = filepath.ToSlash(filepath.Join(filepath.Dir(page), file))
				}
				info, err := os.Stat(dest)
				if err != nil {
					t.Errorf("%s links %s: no such file %s", page, target, dest)
					continue
				}
				if frag == "" || info.IsDir() || !strings.HasSuffix(dest, ".md") {
					continue
				}
				if !anchors(readPage(t, dest))[frag] {
					t.Errorf("%s links %s: %s has no heading #%s", page, target, dest, frag)
				}
			}
		}
	}
}

// docs/README.md, the index by kind, links every page under docs/, so
// that a page added or moved is found from it.
func TestDocsIndexLinksEveryPage(t *testing.T) {
	index := readPage(t, "docs/README.md")
	linked := map[string]bool{}
	for _, m := range linkRE.FindAllStringSubmatch(index, -1) {
		file, _, _ := strings.Cut(m[1], "#")
		linked[filepath.ToSlash(filepath.Join("docs", file))] = true
	}
	for _, page := range docPages(t) {
		dir := filepath.ToSlash(filepath.Dir(page))
		if !strings.HasPrefix(page, "docs/") || page == "docs/README.md" || dir == "docs/reference/cli" && !strings.HasSuffix(page, "/README.md") {
			continue // the commands' pages are linked from their own index
		}
		if !linked[page] {
			t.Errorf("docs/README.md does not link %s: add it under its kind", page)
		}
	}
}

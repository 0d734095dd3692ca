package main

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// db recover salvages a damaged file into a new one, with the tools ingest
// alone brings: each table's rows kept and lost said, a database whose
// search finds a title, the damaged file untouched; an --out that exists
// and a --db that is no database are refused (exit 2) with nothing written.
func TestDBRecoverSalvagesADamagedFile(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.mustRun(0, "run", "--once")
	damage(t, h.db())
	before := fileBytes(t, h.db())
	out := filepath.Join(h.dir, "salvaged.db")
	res := h.mustRun(0, "db", "recover", "--out", out)
	videos := regexp.MustCompile(`(?m)^videos +(\d+) +(\d+) +(\d+)$`).FindStringSubmatch(res.stdout)
	if videos == nil || videos[1] == "0" || !strings.Contains(res.stderr, "db recover: videos: ") ||
		!strings.Contains(res.stderr, "its integrity check is ok") {
		t.Errorf("db recover: want each table's rows kept and lost, a line a table as it goes, the integrity check\n%s", res)
	}
	if !bytes.Equal(fileBytes(t, h.db()), before) {
		t.Errorf("db recover changed the damaged file")
	}
	db := openDB(t, out)
	title := queryString(t, db, `SELECT title FROM videos WHERE title GLOB '[A-Za-z][A-Za-z][A-Za-z]*' LIMIT 1`)
	db.Close()
	word := regexp.MustCompile(`^[A-Za-z]+`).FindString(title)
	h.set("INGEST_DB", out)
	if hits := h.searchJSON(word); len(hits) == 0 {
		t.Errorf("search %q of the salvage (a title %q): no hit", word, title)
	}
	h.set("INGEST_DB", filepath.Join(h.dir, "ingest.db"))

	res = h.mustRun(2, "db", "recover", "--out", out)
	if !strings.Contains(res.stderr, "--out "+out+" exists") {
		t.Errorf("an --out that exists: want it refused naming --out\n%s", res)
	}
	notes := filepath.Join(h.dir, "notes.txt")
	os.WriteFile(notes, bytes.Repeat([]byte("not a database\n"), 500), 0o600)
	h.set("INGEST_DB", notes)
	next := filepath.Join(h.dir, "next.db")
	res = h.mustRun(2, "db", "recover", "--out", next)
	if !strings.Contains(res.stderr, "--db "+notes+" is not an SQLite database") {
		t.Errorf("a --db that is no database: want it refused naming --db\n%s", res)
	}
	if _, err := os.Stat(next); err == nil {
		t.Errorf("a refused recover wrote %s", next)
	}
}

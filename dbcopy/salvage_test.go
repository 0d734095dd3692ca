package dbcopy

import (
	"bytes"
	"context"
	"crypto/sha256"
	"database/sql"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/internal/rig/storetest"
	"github.com/ingestworks/ingest/store"
)

// salvageInto salvages the file at path into a new database beside it.
func salvageInto(t *testing.T, path string) (*store.DB, []Salvaged) {
	t.Helper()
	ctx := context.Background()
	src, err := store.OpenDamaged(ctx, path)
	if err != nil {
		t.Fatalf("open %s as it is: %v", path, err)
	}
	defer src.Close()
	dst, err := store.Open(ctx, filepath.Join(t.TempDir(), "new.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { dst.Close() })
	got, err := Salvage(ctx, src, dst, nil)
	if err != nil {
		t.Fatalf("salvage %s: %v", path, err)
	}
	return dst, got
}

func fileSum(t *testing.T, path string) [32]byte {
	t.Helper()
	return sha256.Sum256(fileBytes(t, path))
}

func fileBytes(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// integrityOK runs SQLite's integrity check and the search index's.
func integrityOK(t *testing.T, db *store.DB) {
	t.Helper()
	var got string
	if err := db.Reader().QueryRow(`PRAGMA integrity_check`).Scan(&got); err != nil || got != "ok" {
		t.Errorf("integrity_check of the salvage: %q %v", got, err)
	}
	integrityCheck(t, db)
}

// A healthy file is salvaged whole: every table's rows and checksum as a
// copy's, a valid database whose search finds a title, the source untouched.
func TestSalvageOfAHealthyFileKeepsEveryRow(t *testing.T) {
	t.Parallel()
	path := storetest.Path(t)
	db, err := store.Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	fillEveryTable(t, db)
	db.Close()
	fillVideos(t, path, 300)
	before := fileSum(t, path)
	dst, got := salvageInto(t, path)
	for _, s := range got {
		if s.Refused != 0 || s.Unreadable != 0 {
			t.Errorf("%s: %+v, want every row kept", s.Table, s)
		}
	}
	src, err := store.OpenExisting(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	sums, err := Sums(context.Background(), src, dst, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range sums {
		if !s.Same() || s.Source.Rows == 0 {
			t.Errorf("%s: source %+v, salvage %+v", s.Table, s.Source, s.Target)
		}
	}
	integrityOK(t, dst)
	hits, err := dst.Search(context.Background(), "Fußball", store.SearchOptions{})
	if err != nil || len(hits) == 0 {
		t.Errorf("search of the salvage for a title: %d hits, %v", len(hits), err)
	}
	if fileSum(t, path) != before {
		t.Errorf("the salvage changed its source")
	}
}

// A file with pages of its videos overwritten gives a valid database
// holding every row of the pages that still read: the videos lost are
// counted, the other tables whole.
func TestSalvageOfADamagedFileKeepsWhatReads(t *testing.T) {
	t.Parallel()
	path := storetest.Path(t)
	const videos = 1500
	fillVideos(t, path, videos)
	damaged := overwriteLeaves(t, path, "videos", 3)
	before := fileSum(t, path)
	dst, got := salvageInto(t, path)
	by := map[string]Salvaged{}
	for _, s := range got {
		by[s.Table] = s
	}
	v := by["videos"]
	t.Logf("videos: %+v, lost about %d", v, v.Lost())
	if v.Unreadable != damaged || v.Kept >= videos || v.Kept < videos*8/10 || v.Lost() < 1 {
		t.Errorf("videos: %+v (lost about %d) of %d, %d pages overwritten: want most kept, the pages counted unreadable",
			v, v.Lost(), videos, damaged)
	}
	if n := storetest.Count(t, dst, `SELECT count(*) FROM videos`); int64(n) != v.Kept {
		t.Errorf("the salvage holds %d videos, says it kept %d", n, v.Kept)
	}
	if e := by["trending_entries"]; e.Kept != videos || e.Refused != 0 || e.Unreadable != 0 {
		t.Errorf("trending_entries: %+v, want its %d rows kept, its pages whole", e, videos)
	}
	integrityOK(t, dst)
	var fk int
	dst.Reader().QueryRow(`SELECT count(*) FROM pragma_foreign_key_check`).Scan(&fk)
	if fk != 0 {
		t.Errorf("the salvage holds %d rows pointing at rows it lacks", fk)
	}
	if fileSum(t, path) != before {
		t.Errorf("the salvage changed its source")
	}
}

// A file that is not a database is refused as such, naming it.
func TestSalvageRefusesAFileThatIsNoDatabase(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "notes.db")
	os.WriteFile(path, bytes.Repeat([]byte("not a database\n"), 1000), 0o600)
	_, err := store.OpenDamaged(context.Background(), path)
	var pe *store.PathError
	if !errors.As(err, &pe) || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "not an SQLite database") {
		t.Errorf("open a text file as a damaged database: %v, want a PathError naming it as no SQLite database", err)
	}
}

// fillVideos stores n videos with long descriptions over many pages,
// each charted once, and leaves the file whole, its WAL checkpointed.
func fillVideos(t *testing.T, path string, n int) {
	t.Helper()
	db, err := store.Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	at := t0
	for p := 0; p*50 < n; p++ {
		var page []ingest.Video
		for i := p * 50; i < min(n, (p+1)*50); i++ {
			v := vid(fmt.Sprintf("v%05d", i), fmt.Sprintf("title %d", i))
			v.Description = strings.Repeat("words of a description ", 12)
			if i%100 == 7 { // longer than a page: its record goes on overflow pages
				v.Description = strings.Repeat(fmt.Sprintf("a long description %d ", i), 400)
			}
			page = append(page, v)
		}
		at = at.Add(time.Minute)
		run(t, db, ingest.Trending, "US", at, page...)
	}
	if _, err := db.Writer().Exec(`PRAGMA wal_checkpoint(TRUNCATE)`); err != nil {
		t.Fatal(err)
	}
	db.Close()
}

// overwriteLeaves writes random bytes over n leaf pages in the middle of
// table's tree, and returns how many it overwrote.
func overwriteLeaves(t *testing.T, path, table string, n int) int {
	t.Helper()
	raw, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	var size int64
	raw.QueryRow(`PRAGMA page_size`).Scan(&size)
	rows, err := raw.Query(`SELECT pageno FROM dbstat WHERE name = ? AND pagetype = 'leaf' ORDER BY path`, table)
	if err != nil {
		t.Fatal(err)
	}
	var leaves []int64
	for rows.Next() {
		var p int64
		rows.Scan(&p)
		leaves = append(leaves, p)
	}
	rows.Close()
	raw.Close()
	if len(leaves) < 10*n {
		t.Fatalf("%s has %d leaf pages: too few to damage %d in its middle", table, len(leaves), n)
	}
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r := rand.New(rand.NewPCG(1, 2))
	mid := len(leaves) / 2
	for _, p := range leaves[mid : mid+n] {
		junk := make([]byte, size)
		for i := range junk {
			junk[i] = byte(r.UintN(256))
		}
		if _, err := f.WriteAt(junk, (p-1)*size); err != nil {
			t.Fatal(err)
		}
	}
	return n
}

package yeardb

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode"

	"github.com/ingestworks/ingest/regions"
	"github.com/ingestworks/ingest/store"
)

// TestBuildFollowsTiersAndDepths checks that a selection shapes what is
// written: a tier-3 chart runs every third hour and stores only its top
// Depth, and a region beyond the defaults speaks its own script.
func TestBuildFollowsTiersAndDepths(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "tiers.db")
	charts, err := regions.Parse("GB,GE:tier=3:depth=50,TR:tier=3:depth=100", regions.Builtin)
	if err != nil {
		t.Fatal(err)
	}
	end := time.Date(2026, 11, 20, 12, 0, 0, 0, time.UTC)
	if err := BuildWith(ctx, path, Options{Days: 1, End: end, Charts: charts}); err != nil {
		t.Fatal(err)
	}
	db, err := store.OpenExisting(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	want := map[string][2]int{"GB": {24, 24 * 77}, "GE": {8, 8 * 50}, "TR": {8, 8 * 100}}
	for region, w := range want {
		var runs, entries int
		if err := db.Reader().QueryRow(`SELECT (SELECT count(*) FROM runs WHERE region = ?1),
			(SELECT count(*) FROM trending_entries WHERE region = ?1)`, region).Scan(&runs, &entries); err != nil {
			t.Fatal(err)
		}
		if runs != w[0] || entries != w[1] {
			t.Errorf("%s: %d runs, %d chart entries; want %d, %d", region, runs, entries, w[0], w[1])
		}
	}
	var georgian int
	rows, err := db.Reader().Query(`SELECT v.title FROM videos v JOIN trending_entries e ON e.vid = v.vid WHERE e.region = 'GE'`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var title string
		rows.Scan(&title)
		if strings.IndexFunc(title, func(r rune) bool { return unicode.Is(unicode.Georgian, r) }) >= 0 {
			georgian++
		}
	}
	if georgian == 0 {
		t.Error("no title of Georgia's chart in Georgian")
	}
}

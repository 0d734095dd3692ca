package store

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/ingestworks/ingest"
)

// The catalogue is empty before its first read, then what the last read
// named, whole: a region the upstream stopped naming goes with it.
func TestRegionCatalogueReplacedWhole(t *testing.T) {
	eachStore(t, func(t *testing.T, db *DB) {
		ctx := context.Background()
		cat := db.RegionCatalogue()
		got, at, err := cat.Load(ctx)
		if err != nil || len(got) != 0 || !at.IsZero() {
			t.Fatalf("before any read: %v at %v, %v; want none at the zero time", got, at, err)
		}
		first := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
		if err := cat.Save(ctx, []ingest.Region{{Code: "GB", Name: "United Kingdom"}, {Code: "AE", Name: "United Arab Emirates"}}, first); err != nil {
			t.Fatal(err)
		}
		later := first.Add(25 * time.Hour)
		want := []ingest.Region{{Code: "AE", Name: "United Arab Emirates"}, {Code: "XK", Name: "Kosovo"}}
		if err := cat.Save(ctx, []ingest.Region{want[1], want[0]}, later); err != nil {
			t.Fatal(err)
		}
		got, at, err = cat.Load(ctx)
		if err != nil || !slices.Equal(got, want) || !at.Equal(later) {
			t.Fatalf("after two reads: %v at %v, %v; want %v at %v", got, at, err, want, later)
		}
	})
}

package storetest

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/ingestworks/ingest/store"
)

// BenchmarkOpen opens a test's database from the migrated copy, beside a
// new file migrated by store.Open, the two taking turns; it reports each
// one's time and their ratio, new/copy.
func BenchmarkOpen(b *testing.B) {
	var inCopy, inNew time.Duration
	n := 0
	for b.Loop() {
		start := time.Now()
		Open(b)
		inCopy += time.Since(start)
		start = time.Now()
		db, err := store.Open(context.Background(), filepath.Join(b.TempDir(), "ingest.db"))
		if err != nil {
			b.Fatal(err)
		}
		db.Close()
		inNew += time.Since(start)
		n++
	}
	b.ReportMetric(float64(inCopy.Nanoseconds())/float64(n), "ns/copy")
	b.ReportMetric(float64(inNew.Nanoseconds())/float64(n), "ns/new")
	b.ReportMetric(float64(inNew)/float64(inCopy), "new/copy")
}

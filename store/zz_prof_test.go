package store_test

import (
	"context"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ingestworks/ingest/internal/yeardb"
	"github.com/ingestworks/ingest/store"
)

func BenchmarkZZExportDay(b *testing.B) {
	ctx := context.Background()
	p, err := yeardb.Pick(ctx, os.Getenv("ZZ_PICK"))
	if err != nil {
		b.Fatal(err)
	}
	db, err := store.Open(ctx, os.Getenv("ZZ_DB"))
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	f := store.ExportFilter{Since: p.End.Truncate(24 * time.Hour), Until: p.End.Add(time.Hour)}
	srv0 := serverCPU()
	var ru0, ru1 syscall.Rusage
	syscall.Getrusage(0, &ru0)
	for b.Loop() {
		n := 0
		if err := db.Export(ctx, f, func(store.ExportRow) error { n++; return nil }); err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(n), "rows")
	}
	syscall.Getrusage(0, &ru1)
	cpu := time.Duration(ru1.Utime.Nano() + ru1.Stime.Nano() - ru0.Utime.Nano() - ru0.Stime.Nano())
	b.ReportMetric(float64(cpu.Milliseconds())/float64(b.N), "cpu-ms/op")
	b.ReportMetric(float64((serverCPU()-srv0)*10)/float64(b.N), "srv-ms/op")
}

// serverCPU sums the clock ticks of the children of ZZ_PGPID.
func serverCPU() int64 {
	parent := os.Getenv("ZZ_PGPID")
	if parent == "" {
		return 0
	}
	ents, _ := os.ReadDir("/proc")
	var sum int64
	for _, e := range ents {
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		s := string(b)
		f := strings.Fields(s[strings.LastIndex(s, ")")+2:])
		if f[1] != parent {
			continue
		}
		u, _ := strconv.ParseInt(f[11], 10, 64)
		k, _ := strconv.ParseInt(f[12], 10, 64)
		sum += u + k
	}
	return sum
}

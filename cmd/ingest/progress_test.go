package main

import (
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/retention"
)

// TestProgressLogSaysWhereLongWorkIs: off a terminal, long work logs its
// rows, rate and what remains once every progressEvery of its clock, not
// once a row.
func TestProgressLogSaysWhereLongWorkIs(t *testing.T) {
	var out strings.Builder
	clock := time.Date(2026, 11, 25, 0, 0, 0, 0, time.UTC)
	p := newProgressLog(slog.New(slog.NewTextHandler(&out, nil)), "db copy: copying rows", func() time.Time { return clock })
	for done := int64(0); done <= 1000; done++ {
		p.at(done, 1000)
		clock = clock.Add(100 * time.Millisecond) // 10 rows a second: 100 s in all
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 10 {
		t.Fatalf("%d lines over 100 s, want one every %s:\n%s", len(lines), progressEvery, out.String())
	}
	if first := lines[0]; !strings.Contains(first, `msg="db copy: copying rows" rows=100 rows_per_second=10 total=1000 remaining=900 eta=1m30s`) {
		t.Errorf("first line %q: want rows, rate, total, what remains and when it ends", first)
	}
}

// TestPruneSaysWhereItIs: a prune logs, once every progressEvery of its
// clock, the rows it has deleted of those it counted, and what remains.
func TestPruneSaysWhereItIs(t *testing.T) {
	var out strings.Builder
	clock := time.Date(2026, 11, 25, 0, 0, 0, 0, time.UTC)
	told := pruneProgress(slog.New(slog.NewTextHandler(&out, nil)),
		retention.Beyond{Runs: 10, Entries: 500, Videos: 490}, func() time.Time { return clock })
	for runs := int64(1); runs <= 10; runs++ {
		clock = clock.Add(5 * time.Second) // a run and its entries a transaction
		told(ingest.Pruned{Runs: runs, Entries: 50 * runs, Videos: 49 * runs})
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 5 {
		t.Fatalf("%d lines over 50 s, want one every %s:\n%s", len(lines), progressEvery, out.String())
	}
	if first := lines[0]; !strings.Contains(first, `msg="prune: deleting rows" rows=200 rows_per_second=20 total=1000 remaining=800 eta=40s`) {
		t.Errorf("first line %q: want rows, rate, total, what remains and when it ends", first)
	}
}

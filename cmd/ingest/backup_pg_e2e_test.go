package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ingestworks/ingest/internal/pgtest"
)

// db backup of a PostgreSQL database is pg_dump's custom format, read back
// whole by pg_restore --list before it takes --out's name: restored into
// an empty database, it holds every run and video the database held. No
// output names the URL's password. Without pg_dump on PATH it is exit 2
// naming it, and nothing is written.
func TestDBBackupOnPostgresIsPgDumps(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.withPostgres()
	h.mustRun(0, "run", "--once", "--regions", "US")
	src := openPG(t, h.env["INGEST_DB"])
	out := filepath.Join(h.dir, "ingest.dump")
	res := h.mustRun(0, "db", "backup", "--out", out)
	if strings.Contains(res.stdout+res.stderr, pgPassword) {
		t.Errorf("the password is in db backup's output:\n%s", res)
	}
	if !strings.Contains(res.stderr, "pg_restore --list reads it whole") {
		t.Errorf("db backup does not say the dump was read back:\n%s", res)
	}
	list, err := exec.Command("pg_restore", "--list", out).CombinedOutput()
	if err != nil || !strings.Contains(string(list), "TABLE DATA public runs") {
		t.Fatalf("pg_restore --list %s: %v\n%s", out, err, list)
	}
	into := pgtest.URL(t)
	if b, err := exec.Command("pg_restore", "--no-owner", "--dbname", into, out).CombinedOutput(); err != nil {
		t.Fatalf("pg_restore into an empty database: %v\n%s", err, b)
	}
	dst := openPG(t, into)
	for _, q := range []string{`SELECT count(*) FROM runs`, `SELECT count(*) FROM videos`, `SELECT count(*) FROM ledger`} {
		if want, got := queryInt(t, src, q), queryInt(t, dst, q); got != want || want == 0 {
			t.Errorf("%s: %d restored, %d in the database", q, got, want)
		}
	}
	parts, _ := filepath.Glob(filepath.Join(h.dir, ".ingest.dump*"))
	if len(parts) != 0 {
		t.Errorf("a backup's part left beside it: %v", parts)
	}

	h.set("PATH", t.TempDir()) // no pg_dump there
	again := filepath.Join(h.dir, "again.dump")
	if res := h.run("db", "backup", "--out", again); res.code != 2 || !strings.Contains(res.stderr, "pg_dump is not on PATH") {
		t.Errorf("no pg_dump on PATH: want exit 2 naming it, got %s", res)
	}
	if _, err := os.Stat(again); err == nil {
		t.Errorf("no pg_dump on PATH: a file was written")
	}
}

package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ingestworks/ingest/clock"
	"github.com/ingestworks/ingest/internal/rig/pgtest"
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

// On PostgreSQL the daemon's /metrics holds the age of the newest backup
// ingest db backup took, another process, against --backup-every given
// alone: while the daemon's clock is stepped two hours on, the age says
// two hours since its start, until a backup taken at that clock's time
// brings it back under a minute.
func TestBackupAgeOnPostgresIsTheNewestDBBackups(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.withPostgres()
	file := filepath.Join(t.TempDir(), "clock-offset")
	h.set(clock.RehearseEnv, file) // absent: no offset
	addr := closedAddr(t)
	p := h.start("run", "--every", "1h", "--regions", "US", "--backup-every", "1h", "--listen", addr)
	age := func() float64 { return metricValue(httpGet("http://"+addr+"/metrics"), "ingest_backup_age_seconds") }
	if !waitFor(cmdTimeout, func() bool { return age() >= 0 || p.exited() }) || p.exited() {
		t.Fatalf("no ingest_backup_age_seconds on /metrics\n%s", p.out)
	}
	if err := os.WriteFile(file, []byte("2h\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if !waitFor(cmdTimeout, func() bool { return age() >= (2 * time.Hour).Seconds() }) {
		t.Fatalf("with no backup and the clock two hours on, the age stays %.0fs\n%s", age(), p.out)
	}
	h.mustRun(0, "db", "backup", "--out", filepath.Join(h.dir, "ingest.dump"))
	var last float64
	if !waitFor(cmdTimeout, func() bool { last = age(); return last >= 0 && last < time.Minute.Seconds() }) {
		t.Errorf("after ingest db backup, the age is %.0fs, want under a minute\n%s", last, p.out)
	}
}

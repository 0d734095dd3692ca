package main

import (
	"database/sql"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
)

// quickCheck is SQLite's quick_check of the file at path, opened read-only
// as an operator's tool would.
func quickCheck(t *testing.T, path string) string {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var got string
	if err := db.QueryRow(`PRAGMA quick_check`).Scan(&got); err != nil {
		return err.Error()
	}
	return got
}

// A backup taken while the daemon writes every region's charts exits 0
// (it verified itself), opens by itself, passes quick_check and holds
// every run the database had finished before it began.
func TestDBBackupWhileTheDaemonWrites(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	// Unpaced, every region's chart runs every minute: a pass every
	// second or so, each page a transaction.
	p := h.startFor(longTimeout, "run", "--every", "1m", "--regions", "all", "--pace=false")
	if !waitFor(longTimeout, func() bool { return strings.Count(p.out.String(), "msg=pass") >= 3 || p.exited() }) || p.exited() {
		t.Fatalf("the daemon ran no pass:\n%s", p.out)
	}
	src := openDB(t, h.db())
	first := queryInt(t, src, `SELECT count(*) FROM runs`)
	for i, name := range []string{"one.db", "two.db", "three.db"} {
		before := queryInt(t, src, `SELECT count(*) FROM runs WHERE finished_ms IS NOT NULL`)
		out := filepath.Join(h.dir, name)
		res := h.mustRunGrowing(0, "db", "backup", "--out", out)
		if !strings.Contains(res.stderr, "quick_check ok") {
			t.Errorf("backup %d: stderr does not say it was checked:\n%s", i, res)
		}
		if got := quickCheck(t, out); got != "ok" {
			t.Errorf("backup %d: quick_check %q", i, got)
		}
		for _, f := range []string{out + "-wal", out + "-shm"} {
			if _, err := os.Stat(f); err == nil {
				t.Errorf("backup %d: %s beside it: a backup is one file", i, f)
			}
		}
		b := openDB(t, out)
		if got := queryInt(t, b, `SELECT count(*) FROM runs WHERE finished_ms IS NOT NULL`); got < before {
			t.Errorf("backup %d holds %d finished runs, the database had %d before it began", i, got, before)
		}
	}
	if n := queryInt(t, src, `SELECT count(*) FROM runs`); n <= first {
		t.Errorf("the daemon wrote no run during the backups (%d runs before, %d after): they were not taken while it wrote", first, n)
	}
	if p.exited() {
		t.Fatalf("the daemon exited while it was backed up:\n%s", p.out)
	}
}

// db backup writes only a new file, or a regular one with --force: a named
// pipe, a device, a directory and a socket are exit 2 naming --out, with
// --force or not, and are left as they were; a link to a regular file
// writes the file it leads to and stays a link. A PostgreSQL --db where
// pg_dump is not on PATH is exit 2 naming it, before anything is read.
func TestDBBackupOutWritesOnlyARegularFile(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.mustRun(0, "run", "--once", "--regions", "US")
	out := filepath.Join(h.dir, "backup.db")
	h.mustRun(0, "db", "backup", "--out", out)
	if got := quickCheck(t, out); got != "ok" {
		t.Fatalf("the backup's quick_check: %q", got)
	}
	before := fileBytes(t, out)
	res := h.mustRun(2, "db", "backup", "--out", out)
	if !strings.Contains(res.stderr, "--force") || string(fileBytes(t, out)) != string(before) {
		t.Errorf("an existing --out: want exit 2 naming --force and the file kept\n%s", res)
	}
	writeFile(t, out, "mine\n")
	h.mustRun(0, "db", "backup", "--out", out, "--force")
	if got := quickCheck(t, out); got != "ok" {
		t.Errorf("--force did not replace the file with a backup: quick_check %q", got)
	}

	fifo := filepath.Join(h.dir, "pipe.db")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(h.dir, "adir")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(h.dir, "s.sock")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	for _, tc := range []struct{ out, says string }{
		{fifo, "is a named pipe"}, {"/dev/null", "is a device"}, {dir, "is a directory"}, {sock, "is a socket"},
	} {
		before, _ := os.Lstat(tc.out)
		for _, force := range []bool{false, true} {
			args := []string{"db", "backup", "--out", tc.out}
			if force {
				args = append(args, "--force")
			}
			res := h.run(args...)
			if res.code != 2 || !strings.Contains(res.stderr, "--out "+tc.out) || !strings.Contains(res.stderr, tc.says) {
				t.Errorf("want exit 2 naming --out and saying %q, got %s", tc.says, res)
			}
			if after, err := os.Lstat(tc.out); err != nil || after.Mode() != before.Mode() {
				t.Errorf("--out %s (force %v): was %v, is now %v (%v)", tc.out, force, before.Mode(), after.Mode(), err)
			}
		}
	}
	target := filepath.Join(h.dir, "real.db")
	writeFile(t, target, "mine\n")
	link := filepath.Join(h.dir, "link.db")
	if err := os.Symlink("real.db", link); err != nil {
		t.Fatal(err)
	}
	h.mustRun(2, "db", "backup", "--out", link)
	h.mustRun(0, "db", "backup", "--out", link, "--force")
	if st, err := os.Lstat(link); err != nil || st.Mode()&os.ModeSymlink == 0 {
		t.Errorf("the link was replaced: %v %v", st, err)
	}
	if got := quickCheck(t, target); got != "ok" {
		t.Errorf("the link's target is not a backup: quick_check %q", got)
	}
	if res := h.run("db", "backup"); res.code != 2 || !strings.Contains(res.stderr, "--out") {
		t.Errorf("no --out: want exit 2 naming it, got %s", res)
	}
	h.set("INGEST_DB", "postgres://ingest@127.0.0.1:1/ingest")
	h.set("PATH", t.TempDir()) // no pg_dump: TestDBBackupOnPostgresIsPgDumps backs PostgreSQL up with it
	if res := h.run("db", "backup", "--out", filepath.Join(h.dir, "pg.db")); res.code != 2 || !strings.Contains(res.stderr, "pg_dump") {
		t.Errorf("a PostgreSQL --db: want exit 2 naming pg_dump, got %s", res)
	}
	if _, err := os.Stat(filepath.Join(h.dir, "pg.db")); err == nil {
		t.Errorf("a PostgreSQL --db: a file was written")
	}
}

// run's schedule of backups is refused, exit 2 naming the setting, where
// it cannot run: with --once, on PostgreSQL, into a directory that is not
// there, keeping none, or --backup-every without --backup-to.
func TestRunBackupSettingsAreChecked(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	dir := t.TempDir()
	for _, tc := range []struct {
		args []string
		says string
	}{
		{[]string{"--once", "--backup-to", dir}, "--once"},
		{[]string{"--backup-to", filepath.Join(dir, "missing")}, "--backup-to"},
		{[]string{"--backup-to", dir, "--backup-keep", "0"}, "--backup-keep"},
		{[]string{"--backup-to", dir, "--backup-every", "10s"}, "--backup-every"},
		{[]string{"--backup-every", "1h"}, "need --backup-to"},
	} {
		res := h.run(append([]string{"run", "--regions", "US"}, tc.args...)...)
		if res.code != 2 || !strings.Contains(res.stderr, tc.says) {
			t.Errorf("run %s: want exit 2 saying %q, got %s", strings.Join(tc.args, " "), tc.says, res)
		}
	}
	if _, err := os.Stat(h.db()); err == nil {
		t.Errorf("a refused schedule created the database")
	}
	h.set("INGEST_DB", "postgres://ingest@127.0.0.1:1/ingest")
	h.set("PATH", t.TempDir()) // no pg_dump: TestDBBackupOnPostgresIsPgDumps backs PostgreSQL up with it
	if res := h.run("run", "--regions", "US", "--backup-to", dir); res.code != 2 || !strings.Contains(res.stderr, "pg_dump") {
		t.Errorf("--backup-to on PostgreSQL: want exit 2 naming pg_dump, got %s", res)
	}
}

// The daemon with --backup-to takes its first backup at once into the
// directory, a whole one, and shows its age on /metrics.
func TestRunBacksUpIntoItsDirectory(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	dir := t.TempDir()
	p := h.start("run", "--every", "1h", "--regions", "US", "--listen", "127.0.0.1:0", "--backup-to", dir, "--backup-every", "1h")
	var files []string
	if !waitFor(cmdTimeout, func() bool {
		files, _ = filepath.Glob(filepath.Join(dir, "ingest-*.db"))
		return len(files) > 0 || p.exited()
	}) || len(files) != 1 {
		t.Fatalf("no backup in --backup-to: %v\n%s", files, p.out)
	}
	if got := quickCheck(t, files[0]); got != "ok" {
		t.Errorf("the scheduled backup's quick_check: %q", got)
	}
	url := regexp.MustCompile(`msg=listening .*url=(http://127\.0\.0\.1:\d+/)`).FindStringSubmatch(p.out.String())
	if url == nil {
		t.Fatalf("no address logged:\n%s", p.out)
	}
	var body string
	if !waitFor(cmdTimeout, func() bool {
		res, err := http.Get(url[1] + "metrics")
		if err != nil {
			return false
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		body = string(b)
		return res.StatusCode == 200 && strings.Contains(body, "ingest_backup_age_seconds")
	}) {
		t.Errorf("/metrics has no ingest_backup_age_seconds:\n%.2000s", body)
	}
	for _, want := range []string{"ingest_backup_every_seconds 3600", "ingest_backup_failures_total 0"} {
		if !strings.Contains(body, want) {
			t.Errorf("/metrics has no %q", want)
		}
	}
	p.signal(t, syscall.SIGTERM)
	if code, exited := p.wait(cmdTimeout); !exited || code != 0 {
		t.Fatalf("after SIGTERM: want exit 0, got %d (exited %v):\n%s", code, exited, p.out)
	}
}

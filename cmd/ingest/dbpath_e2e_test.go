package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
)

// TestUnusableDatabasePathsSayTheFix: a --db that SQLite cannot use is a
// configuration error (exit 2) in one line naming the path and what to
// do, never SQLite's own words, and nothing in the file changes.
func TestUnusableDatabasePathsSayTheFix(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	junk := filepath.Join(h.dir, "notes.txt")
	if err := os.WriteFile(junk, []byte("not a database, just notes\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	future := filepath.Join(h.dir, "future.db")
	db := openRW(t, future)
	if _, err := db.Exec("PRAGMA user_version = 999"); err != nil {
		t.Fatal(err)
	}
	db.Close()
	for _, tc := range []struct {
		name, db string
		args     []string
		want     string
	}{
		{"missing directory", filepath.Join(h.dir, "no", "such", "dir", "x.db"), []string{"run", "--once", "--regions", "US"}, "mkdir -p " + filepath.Join(h.dir, "no", "such", "dir")},
		{"not a database: run", junk, []string{"run", "--once", "--regions", "US"}, "is not an SQLite database"},
		{"not a database: report", junk, []string{"report"}, "is not an SQLite database"},
		{"not a database: search", junk, []string{"search", "x"}, "is not an SQLite database"},
		{"a directory", h.dir, []string{"run", "--once", "--regions", "US"}, "name a file in it"},
		{"a future schema", future, []string{"run", "--once", "--regions", "US"}, "upgrade ingest"},
	} {
		before, _ := os.ReadFile(tc.db)
		h.set("INGEST_DB", tc.db)
		r := h.mustRun(2, tc.args...)
		checkPathError(t, tc.name, r.stderr, tc.db, tc.want)
		if after, _ := os.ReadFile(tc.db); !bytes.Equal(before, after) {
			t.Errorf("%s: the file changed", tc.name)
		}
	}
	if n := len(h.reqs.requests("")); n != 0 {
		t.Errorf("%d requests reached the upstream", n)
	}
	for _, side := range []string{junk + "-wal", junk + "-shm", future + "-wal"} {
		if _, err := os.Stat(side); err == nil {
			t.Errorf("%s was created", side)
		}
	}
}

// TestReadOnlyDirectorySaysTheFix: run on a database in a directory this
// user cannot write (as root, the binary runs as nobody).
func TestReadOnlyDirectorySaysTheFix(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	dir, err := os.MkdirTemp("", "ingest-rodb-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Chmod(filepath.Join(dir, "data"), 0o755); os.RemoveAll(dir) })
	bin, data := filepath.Join(dir, "ingest"), filepath.Join(dir, "data")
	copyFile(t, ingestBin(t), bin, 0o755)
	if err := os.Mkdir(data, 0o555); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	db := filepath.Join(data, "ingest.db")
	cmd := exec.Command(bin, "run", "--once", "--regions", "US")
	cmd.Env = scratchEnv("INGEST_DB="+db, "YOUTUBE_API_KEY="+testKey, "YOUTUBE_ENDPOINT="+h.srv.URL+"/")
	if os.Getuid() == 0 {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if code := exitCode(cmd.Run()); code != 2 {
		t.Fatalf("exit %d, want 2\n%s", code, stderr.String())
	}
	checkPathError(t, "read-only directory", stderr.String(), db, "not writable by this user")
	if entries, _ := os.ReadDir(data); len(entries) != 0 {
		t.Errorf("files created in the read-only directory: %v", entries)
	}
}

func checkPathError(t *testing.T, name, stderr, path, want string) {
	t.Helper()
	lines := strings.Split(strings.TrimSpace(stderr), "\n")
	if len(lines) != 1 || !strings.Contains(lines[0], path) || !strings.Contains(lines[0], want) || !strings.Contains(lines[0], "INGEST_DB") {
		t.Errorf("%s: want one line naming %s, INGEST_DB and %q, got:\n%s", name, path, want, stderr)
	}
	if raw := regexp.MustCompile(`\(\d+\)|unable to open|readonly database|file is not a database`).FindString(stderr); raw != "" {
		t.Errorf("%s: SQLite's own words (%q) reach the user: %s", name, raw, stderr)
	}
}

// TestDefaultDatabaseIsNeverMadeQuietly: with neither --db nor INGEST_DB,
// a read of the default path where no database is exits 2 naming the path
// and the settings, and creates nothing; beside a shared limiter a run
// refuses to create it (exit 2, nothing spent); without one, the run says
// where it creates it.
func TestDefaultDatabaseIsNeverMadeQuietly(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.unset("INGEST_DB")
	at := filepath.Join(h.dir, "ingest.db")
	for _, args := range [][]string{{"report"}, {"search", "football"}, {"export", "--since", "2026-01-01"}, {"history", "abc"}, {"tokens", "list"}} {
		res := h.mustRun(2, args...)
		if !strings.Contains(res.stderr, at) || !strings.Contains(res.stderr, "--db / INGEST_DB") {
			t.Errorf("%s on no database at the default path: stderr does not name %s and --db / INGEST_DB:\n%s", args[0], at, res)
		}
	}
	h.withRedis()
	res := h.mustRun(2, "run", "--once", "--regions", "US")
	if !strings.Contains(res.stderr, at) || !strings.Contains(res.stderr, "--db / INGEST_DB") || !strings.Contains(res.stderr, "REDIS_URL") {
		t.Errorf("a run beside a shared limiter: stderr does not name the default path, --db / INGEST_DB and REDIS_URL:\n%s", res)
	}
	if n := h.fake.Requests(); n != 0 {
		t.Errorf("the refused run sent %d requests upstream, want 0", n)
	}
	if _, err := os.Stat(at); err == nil {
		t.Fatalf("a refused or read-only command created %s", at)
	}
	h.unset("REDIS_URL")
	res = h.mustRun(0, "run", "--once", "--regions", "US")
	if !strings.Contains(res.stderr, "creating the database at the default path") || !strings.Contains(res.stderr, at) {
		t.Errorf("a run creating the default database does not say where:\n%s", res)
	}
	if res := h.mustRun(0, "run", "--once", "--regions", "US"); strings.Contains(res.stderr, "creating the database") {
		t.Errorf("a run on the default database that exists says it creates it:\n%s", res)
	}
}

package main

import (
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/ingestworks/ingest/store"
)

// releasedSteps are the schema steps the release in VERSION writes, from
// store/migrations/releases.txt: SQLite's, then PostgreSQL's.
func releasedSteps(t *testing.T) (sqlite, postgres int) {
	t.Helper()
	version := strings.TrimSpace(string(fileBytes(t, "../../VERSION")))
	for _, line := range strings.Split(string(fileBytes(t, "../../store/migrations/releases.txt")), "\n") {
		if f := strings.Fields(line); len(f) >= 3 && f[0] == version {
			sqlite, err1 := strconv.Atoi(f[1])
			postgres, err2 := strconv.Atoi(f[2])
			if err1 != nil || err2 != nil {
				t.Fatalf("store/migrations/releases.txt: %q", line)
			}
			return sqlite, postgres
		}
	}
	t.Fatalf("store/migrations/releases.txt has no row for VERSION %s", version)
	return 0, 0
}

// releasedDatabase builds, through q, the schema the release's binary
// wrote on a new database: the first steps of dir's files, each as a new
// database runs them. mark records the step reached.
func releasedDatabase(t *testing.T, q *sql.DB, dir string, steps int, mark func(step int) string) {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("../../store/migrations", dir, "*.sql"))
	if err != nil || len(files) < steps {
		t.Fatalf("store/migrations/%s: %d files (%v), want at least %d", dir, len(files), err, steps)
	}
	for i, f := range files[:steps] {
		for _, stmt := range []string{string(fileBytes(t, f)), mark(i + 1)} {
			if _, err := q.Exec(stmt); err != nil {
				t.Fatalf("%s: %v", f, err)
			}
		}
	}
}

// An operator migrates the last release's database before rolling the new
// binary: report refuses it (exit 2, naming the schema); db migrate
// --dry-run lists each step it lacks and changes nothing; db migrate
// applies them, logging each (from, to, its file, how long); run again it
// has nothing to do, and report reads the database. A database newer
// than the binary, or none, is exit 2.
func TestDBMigrateFromTheLastRelease(t *testing.T) {
	t.Parallel()
	sqliteAt, pgAt := releasedSteps(t)
	for _, c := range []struct {
		name      string
		at, want  int
		setup     func(h *harness) *sql.DB
		dir       string
		mark      func(step int) string
		newer     string
		stepsFile string
	}{
		{name: "sqlite", at: sqliteAt, want: store.SchemaVersion, dir: "sqlite",
			setup: func(h *harness) *sql.DB {
				db, err := sql.Open("sqlite", "file:"+h.db()+"?_pragma=busy_timeout(10000)")
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { db.Close() })
				return db
			},
			mark:  func(step int) string { return fmt.Sprintf("PRAGMA user_version = %d", step) },
			newer: "PRAGMA user_version = 999"},
		{name: "postgres", at: pgAt, want: store.PGSchemaVersion, dir: "postgres",
			setup: func(h *harness) *sql.DB {
				db, err := sql.Open("pgx", h.withPostgres())
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { db.Close() })
				if _, err := db.Exec(`CREATE TABLE schema_version (step INTEGER PRIMARY KEY, applied_ms BIGINT NOT NULL)`); err != nil {
					t.Fatal(err)
				}
				return db
			},
			mark:  func(step int) string { return fmt.Sprintf("INSERT INTO schema_version VALUES (%d, 0)", step) },
			newer: "INSERT INTO schema_version VALUES (999, 0)"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			if c.at >= c.want {
				t.Skipf("this tree writes the release's %s schema (%d): nothing to migrate", c.name, c.want)
			}
			h := newHarness(t)
			q := c.setup(h)
			releasedDatabase(t, q, c.dir, c.at, c.mark)

			if res := h.run("report"); res.code != 2 || !strings.Contains(res.stderr, fmt.Sprintf("schema version %d", c.at)) ||
				!strings.Contains(res.stderr, "run `ingest db migrate`") {
				t.Errorf("report on the release's database: want exit 2 naming schema version %d and ingest db migrate\n%s", c.at, res)
			}
			dry := h.mustRun(0, "db", "migrate", "--dry-run")
			lines := strings.Split(strings.TrimSpace(dry.stdout), "\n")
			if len(lines) != c.want-c.at || !strings.HasPrefix(lines[0], fmt.Sprintf("%s/%04d_", c.dir, c.at+1)) ||
				!strings.HasSuffix(lines[0], fmt.Sprintf("%d -> %d", c.at, c.at+1)) ||
				!strings.Contains(dry.stderr, fmt.Sprintf("at schema step %d", c.at)) {
				t.Errorf("db migrate --dry-run: want the %d steps from %d to %d, one a line\n%s", c.want-c.at, c.at, c.want, dry)
			}
			if res := h.run("report"); res.code != 2 {
				t.Errorf("report after db migrate --dry-run: want the database unchanged, still refused\n%s", res)
			}

			if c.name == "sqlite" {
				// A daemon of the older binary holds the file, as ClaimDaemon
				// takes it: a lock on the file itself, and its note beside it.
				unlock := holdAsADaemon(t, h.db())
				if res := h.run("db", "migrate"); res.code != 2 || !strings.Contains(res.stderr, "a daemon runs on") ||
					!strings.Contains(res.stderr, "pid 4242") {
					t.Errorf("db migrate beside a daemon on the SQLite file: want exit 2 naming it\n%s", res)
				}
				unlock()
			}
			res := h.mustRun(0, "db", "migrate")
			for step := c.at + 1; step <= c.want; step++ {
				want := fmt.Sprintf("from=%d to=%d step=%s/%04d_", step-1, step, c.dir, step)
				if !strings.Contains(res.stderr, want) {
					t.Errorf("db migrate: no line for the step %d -> %d (%s)\n%s", step-1, step, want, res)
				}
			}
			if n := strings.Count(res.stderr, "upgraded the database's schema one step"); n != c.want-c.at || strings.Count(res.stderr, "took=") != n {
				t.Errorf("db migrate: %d step lines, want %d, each with took=\n%s", n, c.want-c.at, res)
			}
			if again := h.mustRun(0, "db", "migrate"); !strings.Contains(again.stderr, "nothing to do") ||
				strings.Contains(again.stderr, "one step") {
				t.Errorf("db migrate on a migrated database: want nothing to do\n%s", again)
			}
			h.mustRun(0, "report")

			if _, err := q.Exec(c.newer); err != nil {
				t.Fatal(err)
			}
			for _, args := range [][]string{{"db", "migrate"}, {"db", "migrate", "--dry-run"}} {
				if res := h.run(args...); res.code != 2 || !strings.Contains(res.stderr, "newer than this binary") {
					t.Errorf("%v on a newer database: want exit 2, newer than this binary\n%s", args, res)
				}
			}
		})
	}
	t.Run("none", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		if res := h.run("db", "migrate"); res.code != 2 || !strings.Contains(res.stderr, "no ingest database at --db") {
			t.Errorf("db migrate with no database: want exit 2 naming --db\n%s", res)
		}
		if _, err := os.Stat(h.db()); err == nil {
			t.Errorf("db migrate with no database created %s", h.db())
		}
	})
}

// What a rolling update meets, on each database. A serve that runs while a
// newer binary migrates the database under it keeps serving its pages; a
// serve, report or search started on a database newer than their binary
// refuses it (exit 2). A serve started on the last release's database
// migrates it, as run does, each step logged: its role must be the owner's
// then, or the database migrated first (db migrate).
func TestServeAcrossASchemaUpgrade(t *testing.T) {
	t.Parallel()
	sqliteAt, pgAt := releasedSteps(t)
	for _, c := range []struct {
		name, dir string
		at, want  int
		open      func(h *harness) *sql.DB
		mark      func(step int) string
	}{
		{name: "sqlite", dir: "sqlite", at: sqliteAt, want: store.SchemaVersion,
			open: func(h *harness) *sql.DB {
				db, err := sql.Open("sqlite", "file:"+h.db()+"?_pragma=busy_timeout(10000)")
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { db.Close() })
				return db
			},
			mark: func(step int) string { return fmt.Sprintf("PRAGMA user_version = %d", step) }},
		{name: "postgres", dir: "postgres", at: pgAt, want: store.PGSchemaVersion,
			open: func(h *harness) *sql.DB {
				db, err := sql.Open("pgx", h.withPostgres())
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { db.Close() })
				return db
			},
			mark: func(step int) string { return fmt.Sprintf("INSERT INTO schema_version VALUES (%d, 0)", step) }},
	} {
		t.Run(c.name+"/newer", func(t *testing.T) {
			t.Parallel()
			h := newHarness(t)
			q := c.open(h)
			h.mustRun(0, "tokens", "add", "probe", "--plan", "standard") // creates the database
			base := startServe(t, h)
			if code, _ := get(t, base+"/"); code != 200 {
				t.Fatalf("serve's front page: %d", code)
			}
			if _, err := q.Exec(c.mark(999)); err != nil {
				t.Fatal(err)
			}
			if code, body := get(t, base+"/"); code != 200 {
				t.Errorf("serve's front page after a newer binary migrated its database: %d, want 200\n%s", code, body)
			}
			for _, args := range [][]string{{"serve", "--listen", closedAddr(t)}, {"report"}, {"search", "anything"}} {
				if res := h.run(args...); res.code != 2 || !strings.Contains(res.stderr, "newer than this binary") {
					t.Errorf("%v on a newer database: want exit 2, newer than this binary\n%s", args, res)
				}
			}
		})
		t.Run(c.name+"/older", func(t *testing.T) {
			t.Parallel()
			if c.at >= c.want {
				t.Skipf("this tree writes the release's %s schema: nothing to migrate", c.name)
			}
			h := newHarness(t)
			q := c.open(h)
			if c.name == "postgres" {
				if _, err := q.Exec(`CREATE TABLE schema_version (step INTEGER PRIMARY KEY, applied_ms BIGINT NOT NULL)`); err != nil {
					t.Fatal(err)
				}
			}
			releasedDatabase(t, q, c.dir, c.at, c.mark)
			addr := closedAddr(t)
			p := h.start("serve", "--listen", addr)
			if !waitFor(30*time.Second, func() bool { return apiGetOK("http://" + addr + "/healthz") }) {
				t.Fatalf("serve on the release's database never answered\n%s", p.out)
			}
			if n := strings.Count(p.out.String(), "upgraded the database's schema one step"); n != c.want-c.at {
				t.Errorf("serve on the release's database: %d step lines, want %d\n%s", n, c.want-c.at, p.out)
			}
			h.mustRun(0, "report")
		})
	}
}

// holdAsADaemon takes the daemon's lock on the SQLite file at path, as a
// daemon of another process would, with its note beside the file; the
// func returned lets it go.
func holdAsADaemon(t *testing.T, path string) func() {
	t.Helper()
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(real)
	if err != nil {
		t.Fatal(err)
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(real+".daemon", []byte("pid 4242, host old, since 2026-11-25T00:00:00Z, as "+real+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return func() {
		os.Remove(real + ".daemon")
		unix.Flock(int(f.Fd()), unix.LOCK_UN)
		f.Close()
	}
}

package main

import (
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/ingestworks/ingest/internal/rig/pgtest"
)

// A database that cannot be used is a configuration error (exit 2) in one
// line naming --db / INGEST_DB, the file or URL, and the fix, never the
// driver's own words: a damaged SQLite file, a path SQLite cannot open,
// a PostgreSQL database that does not exist, a password with a bare @.
func TestDatabaseErrorsSayTheFix(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.mustRun(0, "run", "--once", "--regions", "US")
	damaged := filepath.Join(h.dir, "damaged.db")
	copyFile(t, h.db(), damaged, 0o644)
	if err := os.Truncate(damaged, 8192); err != nil {
		t.Fatal(err)
	}
	pg, err := url.Parse(pgtest.URL(t))
	if err != nil {
		t.Fatal(err)
	}
	missing := *pg
	missing.Path = "/no_such_db"
	at := "postgres://" + pg.User.Username() + ":p@ss@" + pg.Host + pg.Path
	for _, tc := range []struct {
		name, db string
		args     []string
		want     []string
	}{
		{"damaged: run", damaged, []string{"run", "--once", "--regions", "US"}, []string{damaged, "damaged", "backup"}},
		{"damaged: report", damaged, []string{"report"}, []string{damaged, "damaged", "backup"}},
		{"damaged: search", damaged, []string{"search", "x"}, []string{damaged, "damaged", "backup"}},
		{"cannot open", "/proc/nope.db", []string{"run", "--once", "--regions", "US"}, []string{"/proc/nope.db", "cannot be opened", "another path"}},
		{"no such PostgreSQL database", missing.String(), []string{"run", "--once", "--regions", "US"}, []string{"no_such_db", "does not exist", "CREATE DATABASE"}},
		{"a bare @ in the password", at, []string{"report"}, []string{"%40", "percent-encode"}},
	} {
		h.set("INGEST_DB", tc.db)
		r := h.run(tc.args...)
		lines := strings.Split(strings.TrimSpace(r.stderr), "\n")
		ok := r.code == 2 && len(lines) == 1 && strings.Contains(lines[0], "INGEST_DB")
		for _, w := range tc.want {
			ok = ok && strings.Contains(lines[0], w)
		}
		if !ok {
			t.Errorf("%s: want exit 2 and one line naming INGEST_DB and %q, got %s", tc.name, tc.want, r)
		}
		if raw := regexp.MustCompile(`\(\d+\)|unable to open|malformed|SQLSTATE|no such host|p@ss`).FindString(r.stderr); raw != "" {
			t.Errorf("%s: the driver's own words or the password (%q) reach the user: %s", tc.name, raw, r.stderr)
		}
	}
}

// A PostgreSQL that cannot be reached is one line, saying it once, with
// what to check; run and check --offline exit 1 on it, as on any outage
// (a supervisor restarts a daemon for it). Credentials or TLS the server
// refuses are a configuration: exit 2 from both, as a SQLite file this
// user cannot open is.
func TestPostgresConnectionErrorsNameWhatToCheck(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	good, err := url.Parse(h.withPostgres())
	if err != nil {
		t.Fatal(err)
	}
	unreachable := *good
	unreachable.Host = closedAddr(t)
	stranger := *good
	stranger.User = url.UserPassword("nobody_here", pgPassword)
	tls := *good
	tls.RawQuery = "sslmode=require"
	for _, tc := range []struct {
		name string
		url  url.URL
		code int
		want []string
	}{
		{"unreachable", unreachable, 1, []string{"cannot connect", "connection refused", "host and port", "sslmode", "INGEST_DB", "ingest check"}},
		{"unknown role", stranger, 2, []string{"refused by the server", "nobody_here", "password", "INGEST_DB"}},
		{"TLS the server lacks", tls, 2, []string{"TLS", "sslmode="}},
	} {
		h.set("INGEST_DB", tc.url.String())
		for _, args := range [][]string{{"run", "--once", "--regions", "US"}, {"check", "--offline"}, {"report"}} {
			res := h.run(args...)
			out := res.stdout + res.stderr
			if res.code != tc.code || strings.Contains(out, pgPassword) || strings.Count(out, "open ") > 1 {
				t.Errorf("%s: want exit %d, the database opened once, no password; got %s", tc.name, tc.code, res)
				continue
			}
			for _, w := range tc.want {
				if !strings.Contains(out, w) {
					t.Errorf("%s: want %q said, got %s", tc.name, w, res)
				}
			}
		}
	}
}

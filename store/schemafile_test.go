package store

import (
	"database/sql"
	"flag"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/ingestworks/ingest/internal/rig/pgtest"
)

var update = flag.Bool("update", false, "rewrite the schema files at the top of the repository")

// sqliteSchemaText writes a database's schema as statements that build it
// again, in the order SQLite keeps them; the tables FTS5 makes for its own
// index are left to the virtual table that makes them.
func sqliteSchemaText(t *testing.T, db *sql.DB) string {
	t.Helper()
	rows, err := db.Query(`SELECT name, sql FROM sqlite_schema
WHERE sql IS NOT NULL AND name NOT LIKE 'sqlite_%'
  AND name NOT IN (SELECT name FROM pragma_table_list WHERE type = 'shadow')
ORDER BY rowid`)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s-- Version %d (PRAGMA user_version).\n\n", schemaHeader("SQLite", "sqlite"), SchemaVersion)
	defer rows.Close()
	for rows.Next() {
		var name, text string
		if err := rows.Scan(&name, &text); err != nil {
			t.Fatal(err)
		}
		b.WriteString(text + ";\n\n")
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(&b, "PRAGMA user_version = %d;\n", SchemaVersion)
	return b.String()
}

func schemaHeader(db, dir string) string {
	return fmt.Sprintf(`-- The complete current %s schema of ingest's database: what the numbered
-- migrations in store/migrations/%s build, read back from a new database.
-- Not applied by anything: the migrations are. A test fails when this file
-- differs from what they build; rewrite it with
--   go test ./store -run TestSchemaFiles -update
`, db, dir)
}

// checkSchemaFile holds the file at path to want, or rewrites it with -update.
func checkSchemaFile(t *testing.T, path, want string) {
	t.Helper()
	if *update {
		if err := os.WriteFile(path, []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (write it with: go test ./store -run TestSchemaFiles -update)", err)
	}
	if string(got) != want {
		t.Errorf("%s is not what the migrations build; rewrite it with: go test ./store -run TestSchemaFiles -update\n%s",
			path, firstDifference(string(got), want))
	}
}

// firstDifference shows the first line where two texts part.
func firstDifference(got, want string) string {
	g, w := strings.Split(got, "\n"), strings.Split(want, "\n")
	for i := 0; i < max(len(g), len(w)); i++ {
		var gl, wl string
		if i < len(g) {
			gl = g[i]
		}
		if i < len(w) {
			wl = w[i]
		}
		if gl != wl {
			return fmt.Sprintf("line %d is\n\t%q\nwant\n\t%q", i+1, gl, wl)
		}
	}
	return ""
}

// The top-level schema.sql is the schema the SQLite migrations build, and
// it builds that schema again by itself.
func TestSchemaFilesSQLite(t *testing.T) {
	t.Parallel()
	fresh := openTest(t)
	text := sqliteSchemaText(t, fresh.Writer())
	checkSchemaFile(t, "../schema.sql", text)

	again := rawSQLite(t, "from-file.db")
	if _, err := again.Exec(text); err != nil {
		t.Fatalf("schema.sql does not build a database: %v", err)
	}
	sameSchema(t, "built from schema.sql", schemaOf(t, again), schemaOf(t, fresh.Writer()))
}

// The top-level schema.postgres.sql is the schema the PostgreSQL
// migrations build, and it builds that schema again by itself.
func TestSchemaFilesPostgres(t *testing.T) {
	t.Parallel()
	url := pgtest.URL(t)
	fresh := openURL(t, url)
	text := schemaHeader("PostgreSQL", "postgres") +
		fmt.Sprintf("-- Step %d (the table schema_version).\n\n", PGSchemaVersion) + pgtest.Dump(t, url)
	checkSchemaFile(t, "../schema.postgres.sql", text)

	again, err := sql.Open("pgx", pgtest.URL(t))
	if err != nil {
		t.Fatal(err)
	}
	defer again.Close()
	if _, err := again.Exec(text); err != nil {
		t.Fatalf("schema.postgres.sql does not build a database: %v", err)
	}
	sameSchema(t, "built from schema.postgres.sql", pgSchemaOf(t, again), pgSchemaOf(t, fresh.Writer()))
}

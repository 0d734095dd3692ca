package store

import (
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"testing"

	"github.com/ingestworks/ingest/internal/rig/pgtest"
)

// schemaOf lists every object of the database's schema, by name.
func schemaOf(t *testing.T, db *sql.DB) map[string]string {
	t.Helper()
	rows, err := db.Query(`SELECT name, coalesce(sql, '') FROM sqlite_schema WHERE name NOT LIKE 'sqlite_%'`)
	if err != nil {
		t.Fatal(err)
	}
	return collect(t, rows)
}

func collect(t *testing.T, rows *sql.Rows) map[string]string {
	t.Helper()
	defer rows.Close()
	out := map[string]string{}
	for rows.Next() {
		var name, text string
		if err := rows.Scan(&name, &text); err != nil {
			t.Fatal(err)
		}
		out[name] = text
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// sameSchema reports every object that differs between got and want.
func sameSchema(t *testing.T, what string, got, want map[string]string) {
	t.Helper()
	for name, text := range want {
		if got[name] != text {
			t.Errorf("%s: %s is\n%s\nwant\n%s", what, name, got[name], text)
		}
	}
	for name := range got {
		if _, ok := want[name]; !ok {
			t.Errorf("%s: %s should not be there", what, name)
		}
	}
}

func rawSQLite(t *testing.T, name string) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlite", DSN(filepath.Join(t.TempDir(), name), false))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// TestUpgradesMatchSchema builds a database of the first released schema
// (testdata/schema_v1.sql), upgrades it, and checks it ends up with
// exactly what a new database gets from the migrations.
func TestUpgradesMatchSchema(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	v1, err := os.ReadFile("testdata/schema_v1.sql")
	if err != nil {
		t.Fatal(err)
	}
	old := rawSQLite(t, "old.db")
	if _, err := old.Exec(string(v1) + "; PRAGMA user_version = 1"); err != nil {
		t.Fatal(err)
	}
	if err := Migrate(ctx, old); err != nil {
		t.Fatalf("upgrade from version 1: %v", err)
	}
	fresh := openTest(t)
	want := schemaOf(t, fresh.Writer())
	sameSchema(t, "upgraded from version 1", schemaOf(t, old), want)
	var v int
	if err := old.QueryRow("PRAGMA user_version").Scan(&v); err != nil || v != SchemaVersion {
		t.Errorf("user_version after upgrade = %d (%v), want %d", v, err, SchemaVersion)
	}
}

// pgSchemaOf lists every column, index, constraint and trigger of the
// database's public schema, by name.
func pgSchemaOf(t *testing.T, db *sql.DB) map[string]string {
	t.Helper()
	rows, err := db.Query(`
SELECT 'column ' || table_name || '.' || column_name,
  concat_ws(' ', data_type, is_nullable, column_default, ordinal_position)
FROM information_schema.columns WHERE table_schema = 'public'
UNION ALL
SELECT 'index ' || indexname, indexdef FROM pg_indexes WHERE schemaname = 'public'
UNION ALL
SELECT 'constraint ' || conrelid::regclass || '.' || conname, pg_get_constraintdef(oid)
FROM pg_constraint WHERE connamespace = 'public'::regnamespace
UNION ALL
SELECT 'trigger ' || tgname, pg_get_triggerdef(oid) FROM pg_trigger WHERE NOT tgisinternal
UNION ALL
SELECT 'function ' || proname, md5(prosrc) FROM pg_proc WHERE pronamespace = 'public'::regnamespace`)
	if err != nil {
		t.Fatal(err)
	}
	return collect(t, rows)
}

// A PostgreSQL database left at step 1 by an old binary, holding rows, is
// upgraded in place to exactly the schema a new database gets.
func TestPGUpgradesMatchSchema(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	old := pgtest.URL(t)
	raw, err := sql.Open("pgx", old)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	tx, err := raw.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		`CREATE TABLE schema_version (step INTEGER PRIMARY KEY, applied_ms BIGINT NOT NULL)`,
		pgMigrations[0].sql,
		`INSERT INTO schema_version VALUES (1, 0)`,
		`INSERT INTO videos (id, title, description, tags, channel_id, channel_title, category_id,
  duration, first_seen_ms, last_seen_ms) VALUES ('abc', 'A title', '', '[]', 'UC1', 'Chan', '10', 'PT1M', 1, 1)`,
	} {
		if _, err := tx.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	upgraded := openURL(t, old)
	fresh := openURL(t, pgtest.URL(t))
	sameSchema(t, "upgraded from step 1", pgSchemaOf(t, upgraded.Writer()), pgSchemaOf(t, fresh.Writer()))
}

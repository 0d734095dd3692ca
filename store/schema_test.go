package store

import (
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"testing"
)

// schemaOf lists every object of the database's schema, by name.
func schemaOf(t *testing.T, db *sql.DB) map[string]string {
	t.Helper()
	rows, err := db.Query(`SELECT name, coalesce(sql, '') FROM sqlite_schema WHERE name NOT LIKE 'sqlite_%'`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := map[string]string{}
	for rows.Next() {
		var name, text string
		if err := rows.Scan(&name, &text); err != nil {
			t.Fatal(err)
		}
		out[name] = text
	}
	return out
}

// TestUpgradesMatchSchema builds a database of the first released schema
// (testdata/schema_v1.sql), upgrades it, and checks it ends up with exactly
// what schema.sql gives a new database.
func TestUpgradesMatchSchema(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	v1, err := os.ReadFile("testdata/schema_v1.sql")
	if err != nil {
		t.Fatal(err)
	}
	old, err := sql.Open("sqlite", DSN(filepath.Join(t.TempDir(), "old.db"), false))
	if err != nil {
		t.Fatal(err)
	}
	defer old.Close()
	if _, err := old.Exec(string(v1) + "; PRAGMA user_version = 1"); err != nil {
		t.Fatal(err)
	}
	if err := Migrate(ctx, old); err != nil {
		t.Fatalf("upgrade from version 1: %v", err)
	}
	fresh := openTest(t)
	got, want := schemaOf(t, old), schemaOf(t, fresh.Writer())
	for name, text := range want {
		if got[name] != text {
			t.Errorf("%s after upgrade:\n%s\nwant (schema.sql):\n%s", name, got[name], text)
		}
	}
	for name := range got {
		if _, ok := want[name]; !ok {
			t.Errorf("%s is in the upgraded database, not in schema.sql", name)
		}
	}
	var v int
	if err := old.QueryRow("PRAGMA user_version").Scan(&v); err != nil || v != SchemaVersion {
		t.Errorf("user_version after upgrade = %d (%v), want %d", v, err, SchemaVersion)
	}
}

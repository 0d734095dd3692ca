package pgtest

import (
	"context"
	"database/sql"
	"os"
	"testing"
)

func TestMain(m *testing.M) { os.Exit(Run(m)) }

// Two tests get two databases of one server: what one creates, the other
// does not see.
func TestURLGivesEachTestItsOwnDatabase(t *testing.T) {
	ctx := context.Background()
	a, b := open(t, URL(t)), open(t, URL(t))
	if _, err := a.ExecContext(ctx, `CREATE TABLE only_here (x int)`); err != nil {
		t.Fatal(err)
	}
	var n int
	if err := b.QueryRowContext(ctx, `SELECT count(*) FROM pg_tables WHERE tablename = 'only_here'`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 0 {
		t.Errorf("the second database sees the first one's table: got %d tables, want 0", n)
	}
	var v string
	if err := a.QueryRowContext(ctx, `SHOW server_version`).Scan(&v); err != nil || v == "" {
		t.Errorf("server_version = %q, %v", v, err)
	}
}

func open(t *testing.T, url string) *sql.DB {
	db, err := sql.Open("pgx", url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

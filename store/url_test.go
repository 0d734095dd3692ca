package store

import (
	"errors"
	"strings"
	"testing"
)

// A --db written as a URL whose scheme pgx does not read as PostgreSQL's,
// or as a connection string of keywords, is a PathError that holds none
// of the password; a file's path, with a colon or not, is not refused.
func TestCheckURLRefusesWhatIsNotAFileNorPostgres(t *testing.T) {
	for _, raw := range []string{
		"Postgres://u:s3cret@h/db", "postgres:/u:s3cret@h/db", "postgress://u:s3cret@h/db",
		"pg://u:s3cret@h/db", "mysql://u:s3cret@h/db", "pg://s3cret@h/db",
		"host=h user=u password=s3cret dbname=db",
	} {
		err := CheckURL(raw)
		if !errors.Is(err, ErrUnusablePath) || strings.Contains(err.Error(), "s3cret") {
			t.Errorf("CheckURL(%q) = %v; want a PathError without the password", raw, err)
		}
		if got := Redact(raw); strings.Contains(got, "s3cret") && !strings.Contains(raw, "password=") {
			t.Errorf("Redact(%q) = %q", raw, got)
		}
	}
	for _, path := range []string{"ingest.db", "./a:b.db", "/var/lib/ingest/ingest.db", "data:2026.db", "postgres://u@h/db"} {
		if err := CheckURL(path); err != nil {
			t.Errorf("CheckURL(%q) = %v; want nil", path, err)
		}
	}
}

package store

import (
	"errors"

	"github.com/ingestworks/ingest"
)

// OpenRefused is a database that did not open (err), as the user reads it: a
// path that cannot be used or a schema of another version is a
// configuration error (ingest.ConfigError, exit 2) naming the setting and
// the fix. Any other error already names the database (the store's "open
// NAME: ..."), once, and is err itself.
func OpenRefused(err error) error {
	var pe *PathError
	var ve *VersionError
	switch {
	case errors.As(err, &pe):
		return ingest.ConfigErrorf("--db (INGEST_DB) %v", pe)
	case errors.As(err, &ve):
		return ingest.ConfigErrorf("--db (INGEST_DB) %v", ve)
	}
	return err
}

// NoneYetError is a database that does not exist yet, as a command that
// needs it says so, with the fix; it matches ErrNoDatabase.
type NoneYetError struct{ DB string }

func (e NoneYetError) Error() string {
	return "no database at " + e.DB + " yet: run `ingest run --once` first (or point --db / INGEST_DB at one)"
}

func (NoneYetError) Is(target error) bool { return target == ErrNoDatabase }

package export

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/ingestworks/ingest/store"
)

// Write streams the rows of db that filter selects to w in format, calling
// each (when set) after every row; a nil db has no rows (the CSV's header
// alone). An export a cancelled ctx stopped returns context.Canceled as is.
func Write(ctx context.Context, db *store.DB, filter store.ExportFilter, format string, w io.Writer, each func()) error {
	enc, err := New(format, w)
	if err != nil {
		return fmt.Errorf("export: %w", err)
	}
	if db == nil {
		return enc.Close()
	}
	err = db.Export(ctx, filter, func(r store.ExportRow) error {
		if each != nil {
			each()
		}
		return enc.Write(r)
	})
	if err == nil {
		err = enc.Close()
	}
	if err != nil && !errors.Is(err, context.Canceled) {
		return fmt.Errorf("export %s: %w", format, err)
	}
	return err
}

// CreateError is WriteFile's failure to create the file it writes first.
type CreateError struct{ Err error }

func (e *CreateError) Error() string { return e.Err.Error() }
func (e *CreateError) Unwrap() error { return e.Err }

// WriteFile writes the file path with write: into a file beside it first
// (CreateBeside), renamed to path once complete, so that a failed export
// never leaves a partial file under the name asked for; the file beside
// is removed on every way out.
func WriteFile(path string, write func(io.Writer) error) error {
	tmp, err := CreateBeside(path)
	if err != nil {
		return &CreateError{Err: err}
	}
	defer os.Remove(tmp.Name())
	if err := write(tmp); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("--out %s: %w", path, err)
	}
	if err := Replace(tmp.Name(), path, exportInstead); err != nil {
		return fmt.Errorf("--out %s: %w", path, err)
	}
	return nil
}

// Replace renames the whole file tmp, written beside path, to path. What
// was checked before it was written may have been replaced meanwhile: the
// rename never goes over anything but a regular file (instead says what to
// do then).
func Replace(tmp, path, instead string) error {
	if st, err := os.Lstat(path); err == nil {
		if err := notRegular(path, st.Mode(), instead); err != nil {
			return err
		}
	}
	return os.Rename(tmp, path)
}

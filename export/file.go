package export

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// CheckPath refuses a path an export cannot be written to: a directory,
// or a file in a directory that does not exist; the error says what to do.
func CheckPath(path string) error {
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		return fmt.Errorf("is a directory: name a file in it, such as %s", filepath.Join(path, "export.csv"))
	}
	dir := filepath.Dir(path)
	st, err := os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("the directory %s does not exist: create it (mkdir -p %s), or write elsewhere", dir, dir)
	case err == nil && !st.IsDir():
		return fmt.Errorf("%s is not a directory: write into a directory", dir)
	}
	return nil
}

// CreateBeside creates a new, hidden file next to path, for an export to
// be written in and renamed to path once complete, so that a failed export
// never leaves a partial file under the name asked for. Its mode is a
// plain create's (0666 less the umask: os.CreateTemp's 0600 would leave the
// export unreadable to the people it is for).
func CreateBeside(path string) (*os.File, error) {
	for i := 0; ; i++ {
		name := filepath.Join(filepath.Dir(path), fmt.Sprintf(".%s.%d.%d", filepath.Base(path), os.Getpid(), i))
		f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o666)
		if !errors.Is(err, os.ErrExist) || i >= 1000 {
			return f, err
		}
	}
}

//go:build unix

package export

import (
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestCreateBesideIsReadable: the file is created as a plain create would
// (0666 less the umask), beside the path, and never over another.
func TestCreateBesideIsReadable(t *testing.T) {
	old := syscall.Umask(0o022)
	defer syscall.Umask(old)
	path := filepath.Join(t.TempDir(), "out.csv")
	a, err := CreateBeside(path)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := CreateBeside(path)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	st, err := a.Stat()
	if err != nil {
		t.Fatal(err)
	}
	if got := st.Mode().Perm(); got != 0o644 {
		t.Errorf("mode %v, want -rw-r--r--", got)
	}
	if a.Name() == b.Name() || filepath.Dir(a.Name()) != filepath.Dir(path) || !strings.HasPrefix(filepath.Base(a.Name()), ".out.csv.") {
		t.Errorf("created %s and %s beside %s", a.Name(), b.Name(), path)
	}
}

// A path that became a named pipe while the export ran is not renamed
// over: WriteFile says so and leaves the pipe, and no file beside it.
func TestWriteFileNeverRenamesOverAPipe(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "out.csv")
	err := WriteFile(path, func(w io.Writer) error {
		if _, err := io.WriteString(w, "rows\n"); err != nil {
			return err
		}
		return syscall.Mkfifo(path, 0o644) // in the meantime
	})
	if err == nil || !strings.Contains(err.Error(), "is a named pipe") {
		t.Errorf("WriteFile over a pipe made meanwhile: %v, want it refused", err)
	}
	if st, err := os.Lstat(path); err != nil || st.Mode()&fs.ModeNamedPipe == 0 {
		t.Errorf("the pipe was replaced: %v %v", st, err)
	}
	if left, _ := filepath.Glob(filepath.Join(dir, ".out.csv.*")); len(left) != 0 {
		t.Errorf("left beside it: %v", left)
	}
}

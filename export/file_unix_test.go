//go:build unix

package export

import (
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

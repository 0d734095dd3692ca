package export

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

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

package export

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestCheckPath(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ name, path, want string }{
		{"new file", filepath.Join(dir, "x.csv"), ""},
		{"existing file", file, ""},
		{"a directory", dir, "is a directory: name a file in it, such as " + filepath.Join(dir, "export.csv")},
		{"no directory", filepath.Join(dir, "no", "x.csv"), "the directory " + filepath.Join(dir, "no") + " does not exist"},
		{"under a file", filepath.Join(file, "x.csv"), file + " is not a directory"},
	} {
		err := CheckPath(tc.path)
		if (tc.want == "") != (err == nil) || (err != nil && !strings.HasPrefix(err.Error(), tc.want)) {
			t.Errorf("%s: got %v, want %q", tc.name, err, tc.want)
		}
	}
}

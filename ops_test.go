package ingest

import (
	"strings"
	"testing"
)

func TestOperationsAreWellFormed(t *testing.T) {
	seen := map[string]bool{}
	for _, op := range Operations {
		if seen[op.Name] || seen[op.Path] || op.Path == "" || strings.HasPrefix(op.Path, "/") {
			t.Errorf("%s: duplicate name or path, or a path that is empty or absolute (%q)", op.Name, op.Path)
		}
		seen[op.Name], seen[op.Path] = true, true
		if len(op.Cost) == 0 {
			t.Errorf("%s: no cost", op.Name)
		}
	}
}

package ingest

import (
	"reflect"
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

// TestEveryVideoFieldHasASource: a field of a Video that no source names
// would be stored empty, its answer's field left out of fields=.
func TestEveryVideoFieldHasASource(t *testing.T) {
	named := map[string]int{}
	for _, s := range VideoSources {
		named[s.Field]++
		if _, ok := reflect.TypeFor[Video]().FieldByName(s.Field); !ok {
			t.Errorf("VideoSources: %s (%s) names no field of Video", s.Field, s.Path)
		}
	}
	for f := range reflect.TypeFor[Video]().Fields() {
		if named[f.Name] != 1 {
			t.Errorf("Video.%s: named by %d of VideoSources, want 1", f.Name, named[f.Name])
		}
	}
	for _, op := range Operations {
		if len(Keeps(op.Name)) == 0 {
			t.Errorf("%s: Keeps says nothing of its answer is read", op.Name)
		}
	}
}

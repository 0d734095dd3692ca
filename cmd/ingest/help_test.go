package main

import (
	"strings"
	"testing"
)

// The command tree is built by every test that reads its flags, several at
// once, as tests in parallel do: building it touches no state the trees
// share, so the race detector finds nothing, and every tree's usage uses
// the wrapped flags.
func TestCommandTreesBuildTogether(t *testing.T) {
	for i := range 4 {
		t.Run("", func(t *testing.T) {
			t.Parallel()
			root := newRoot()
			if !strings.Contains(root.UsageTemplate(), "wrappedFlags") {
				t.Errorf("tree %d: the usage template does not wrap the flags", i)
			}
		})
	}
}

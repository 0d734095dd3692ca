package termbar

import (
	"bytes"
	"io"
	"os"
	"testing"
)

// Off a terminal there is no bar, and the nil bar a caller holds then
// does nothing.
func TestNoBarOffATerminal(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	for name, out := range map[string]io.Writer{"a buffer": &bytes.Buffer{}, "a pipe": w} {
		if b := New(out, 10, "x"); b != nil {
			t.Errorf("%s: got a bar, want none", name)
		}
	}
	var b *Bar
	b.Start()
	b.Describe("y")
	b.Set(3)
	b.Add()
	b.Finish()
}

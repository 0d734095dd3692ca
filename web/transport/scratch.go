package transport

import (
	"bytes"
	"encoding/json"
	"sync"
)

// Scratch is the buffer a page's template or an answer's JSON is written
// into before the response is given it, kept for the next build rather
// than grown from nothing at each: a landing rebuilds the same pages, and
// the buffers grown afresh, with the JSON encoder's own buffer it indents
// into, were a large share of what the rebuilds allocated. Enc writes
// into Buf, indented, and keeps its indent buffer between builds.
type Scratch struct {
	Buf bytes.Buffer
	Enc *json.Encoder
}

var scratches = sync.Pool{New: func() any {
	s := &Scratch{}
	s.Enc = json.NewEncoder(&s.Buf)
	s.Enc.SetIndent("", "  ")
	return s
}}

// maxScratch is the largest buffer kept for the next build: one grown past
// it by an unusually large answer goes with that answer.
const maxScratch = 4 << 20

// TakeScratch is an empty Scratch, another build's when one was given
// back.
func TakeScratch() *Scratch {
	s := scratches.Get().(*Scratch)
	s.Buf.Reset()
	return s
}

// GiveBack keeps s for the next build; its bytes may not be read after.
func (s *Scratch) GiveBack() {
	if s.Buf.Cap() <= maxScratch {
		scratches.Put(s)
	}
}

package web

import (
	"bytes"
	"encoding/json"
	"sync"
)

// scratch is the buffer a page's template or an answer's JSON is written
// into before the response is given it, kept for the next build rather
// than grown from nothing at each: a landing rebuilds the same pages, and
// the buffers grown afresh, with the JSON encoder's own buffer it indents
// into, were a large share of what the rebuilds allocated. The encoder
// writes into buf and keeps its indent buffer between builds.
type scratch struct {
	buf bytes.Buffer
	enc *json.Encoder
}

var scratches = sync.Pool{New: func() any {
	s := &scratch{}
	s.enc = json.NewEncoder(&s.buf)
	s.enc.SetIndent("", "  ")
	return s
}}

// maxScratch is the largest buffer kept for the next build: one grown past
// it by an unusually large answer goes with that answer.
const maxScratch = 4 << 20

// takeScratch is an empty scratch, another build's when one was given
// back.
func takeScratch() *scratch {
	s := scratches.Get().(*scratch)
	s.buf.Reset()
	return s
}

// giveBack keeps s for the next build; its bytes may not be read after.
func (s *scratch) giveBack() {
	if s.buf.Cap() <= maxScratch {
		scratches.Put(s)
	}
}

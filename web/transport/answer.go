package transport

import (
	"bytes"
	"net/http"
	"strings"
	"sync"
)

// Answer holds a handler's answer until Send sends it, or until the site
// keeps it (an answer the handler compressed itself, as the metrics'
// handler does, is sent as it is).
type Answer struct {
	header http.Header
	status int
	buf    bytes.Buffer
	wrote  bool
}

// NewAnswer is an empty answer with header, whose status is status until
// its handler writes one.
func NewAnswer(header http.Header, status int) *Answer {
	return &Answer{header: header, status: status}
}

// reused hold the bytes of answers built to be kept (NewReused) until
// their bytes are copied and Released: a page's bytes grown anew at every
// build were most of what a build allocated. Bytes past maxReused go with
// their answer, so that one large page holds no memory after it.
var reused sync.Pool // *[]byte

const maxReused = 4 << 20

// NewReused is NewAnswer writing into bytes another answer Released.
func NewReused(header http.Header, status int) *Answer {
	a := NewAnswer(header, status)
	if p, ok := reused.Get().(*[]byte); ok {
		a.buf = *bytes.NewBuffer((*p)[:0])
	}
	return a
}

// Release gives a's bytes back to be reused by NewReused: a's body is not
// read again.
func (a *Answer) Release() {
	if buf := a.buf.Bytes(); cap(buf) <= maxReused {
		buf = buf[:0]
		reused.Put(&buf)
	}
	a.buf = bytes.Buffer{}
}

func (a *Answer) Header() http.Header { return a.header }

func (a *Answer) WriteHeader(status int) {
	if !a.wrote {
		a.status, a.wrote = status, true
	}
}

func (a *Answer) Write(p []byte) (int, error) {
	a.WriteHeader(http.StatusOK)
	return a.buf.Write(p)
}

// Status is the answer's status.
func (a *Answer) Status() int { return a.status }

// Body is the answer's bytes, as its handler wrote them.
func (a *Answer) Body() []byte { return a.buf.Bytes() }

// Clone is a copy of a that another request may send: sending adds to
// the header it is given.
func (a *Answer) Clone() *Answer {
	c := &Answer{header: a.header.Clone(), status: a.status, wrote: a.wrote}
	c.buf.Write(a.buf.Bytes())
	return c
}

// Keepable reports whether a is an answer to keep: a 200 that is to be
// revalidated.
func (a *Answer) Keepable() bool {
	return a.status == http.StatusOK && strings.HasPrefix(a.header.Get("Cache-Control"), Revalidate)
}

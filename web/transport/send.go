// Package transport is how every answer of the site leaves the process,
// whatever route built it (docs/reference/api/caching.md):
//
//   - Pages and JSON are compressed with gzip when the client takes it.
//   - An answer that may be kept (its handler marked it Revalidate)
//     carries an ETag made from its bytes, so it changes whenever anything
//     shown changes (a run, tracking, a refresh, a deletion), and the
//     Last-Modified of its content when the handler knows it; never the
//     time a server built or sent it, so that servers on one database send
//     the same validators. A conditional request whose copy is still what
//     would be sent is answered 304. Here the body is made before it is
//     compared: a 304 saves the bytes on the wire, not the reads. The
//     site keeps the readers' answers instead (web's cache.go), built once
//     per change of the store's data, and compared without building.
//   - Who may keep it, a shared cache or the requester alone, is decided
//     by the site for every answer (web's shared.go), handed to Send as
//     a function, so that this package knows no route and no listener.
//
// A static file (Static) is served under a name with its content's hash,
// kept for a year, and under its plain name, to be revalidated.
package transport

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Revalidate is the Cache-Control a handler gives an answer that may be
// kept: Send makes it the header the site's rules give.
const Revalidate = "no-cache"

// CompressMin is the smallest body worth compressing.
const CompressMin = 512

// CacheFor is the Cache-Control a handler gives an answer: one that may
// be kept is marked so (the site says by whom); an error is not kept.
func CacheFor(status int) string {
	if status == http.StatusOK {
		return Revalidate
	}
	return "no-store"
}

// Keepers sets h's Cache-Control (and what a shared cache keys it by) for
// an answer with status: who may keep it, as the site decides.
type Keepers func(h http.Header, status int)

// Send sends a buffered answer as the package's rules say, keepers
// deciding who may keep it.
func Send(w http.ResponseWriter, r *http.Request, a *Answer, keepers Keepers) {
	hdr := w.Header()
	for k, v := range a.header { // an answer built apart from w
		hdr[k] = v
	}
	body := a.buf.Bytes()
	if Compressible(hdr.Get("Content-Type")) && hdr.Get("Content-Encoding") == "" {
		hdr.Add("Vary", "Accept-Encoding") // on a 304 too: it stands for the 200
	}
	kept := a.status == http.StatusOK && (r.Method == http.MethodGet || r.Method == http.MethodHead) &&
		strings.HasPrefix(hdr.Get("Cache-Control"), Revalidate)
	keepers(hdr, a.status)
	if kept {
		tag := Tag(body)
		hdr.Set("ETag", tag)
		lm, err := http.ParseTime(hdr.Get("Last-Modified"))
		if notModified(r, tag, lm, err == nil) {
			for _, k := range []string{"Content-Length", "Content-Encoding"} {
				hdr.Del(k)
			}
			w.WriteHeader(http.StatusNotModified)
			return
		}
	}
	if Compressible(hdr.Get("Content-Type")) && hdr.Get("Content-Encoding") == "" {
		if len(body) >= CompressMin && AcceptsGzip(r) {
			body = Gzip(body)
			hdr.Set("Content-Encoding", "gzip")
		}
	}
	hdr.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(a.status)
	if r.Method != http.MethodHead {
		w.Write(body)
	}
}

// Tag is the weak ETag of body: made from its bytes alone, so that every
// server sends the same of the same answer.
func Tag(body []byte) string {
	sum := sha256.Sum256(body)
	return `W/"` + hex.EncodeToString(sum[:12]) + `"`
}

// gzipWriters are reused, reset for each body: a writer's tables are most
// of what compressing an answer allocates, and a reset writer writes what
// a new one at its level would.
var gzipWriters = sync.Pool{New: func() any {
	zw, _ := gzip.NewWriterLevel(nil, gzip.DefaultCompression) // the level is valid
	return zw
}}

// Gzip is body compressed at gzip's default level.
func Gzip(body []byte) []byte {
	var z bytes.Buffer
	zw := gzipWriters.Get().(*gzip.Writer)
	zw.Reset(&z)
	zw.Write(body)
	zw.Close()
	zw.Reset(nil) // holds nothing of this body while it waits
	gzipWriters.Put(zw)
	return z.Bytes()
}

// notModified reads a conditional request: If-None-Match when it is sent
// (weak comparison), else If-Modified-Since against the content's time.
func notModified(r *http.Request, tag string, lm time.Time, hasLM bool) bool {
	if inm := r.Header.Get("If-None-Match"); inm != "" {
		for _, t := range strings.Split(inm, ",") {
			t = strings.TrimSpace(t)
			if t == "*" || strings.TrimPrefix(t, "W/") == strings.TrimPrefix(tag, "W/") {
				return true
			}
		}
		return false
	}
	if ims := r.Header.Get("If-Modified-Since"); ims != "" && hasLM {
		t, err := http.ParseTime(ims)
		return err == nil && !t.Before(lm)
	}
	return false
}

// Compressible reports whether an answer of the content type ct is worth
// compressing: text (pages, JSON, feeds, stylesheets, SVG), never bytes
// compressed already.
func Compressible(ct string) bool {
	for _, p := range []string{"text/html", "application/json", "text/css", "image/svg+xml", "text/plain", "application/atom+xml", "application/xml"} {
		if strings.HasPrefix(ct, p) {
			return true
		}
	}
	return false
}

// AcceptsGzip reads Accept-Encoding: gzip named and not refused (q=0).
func AcceptsGzip(r *http.Request) bool {
	for _, part := range strings.Split(r.Header.Get("Accept-Encoding"), ",") {
		name, params, _ := strings.Cut(strings.TrimSpace(part), ";")
		if strings.EqualFold(strings.TrimSpace(name), "gzip") || strings.TrimSpace(name) == "*" {
			q := strings.ReplaceAll(strings.TrimSpace(params), " ", "")
			return q != "q=0" && q != "q=0.0" && q != "q=0.00" && q != "q=0.000"
		}
	}
	return false
}

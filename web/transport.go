package web

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"io/fs"
	"net/http"
	"path"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/ingestworks/ingest/web/signin"
)

// The transport of every answer (docs/reference/api/caching.md):
//
//   - Pages and JSON are compressed with gzip when the client takes it.
//   - An answer that may be kept (the handler marked it revalidate) carries
//     an ETag made from its bytes, so it changes whenever anything shown
//     changes (a run, tracking, a refresh, a deletion), and the
//     Last-Modified of its content when the handler knows it; never the
//     time a server built or sent it, so that servers on one database send
//     the same validators. A conditional request whose copy is still what
//     would be sent is answered 304. Here the body is made before it is
//     compared: a 304 saves the bytes on the wire, not the reads. The
//     readers' answers are kept instead (cache.go), built once per change
//     of the store's data, and compared without building.
//   - Who may keep it, a shared cache or the requester alone, is decided
//     here for every answer (shared.go).

// revalidate is the Cache-Control a handler gives an answer that may be
// kept: the transport makes it the header shared.go's rules give.
const revalidate = "no-cache"

// compressMin is the smallest body worth compressing.
const compressMin = 512

// transport buffers a handler's answer and sends it as the rules above
// say, on a route whose answers are shared or not (Route.shared).
func (s *Server) transport(w http.ResponseWriter, r *http.Request, h http.Handler, shared bool) {
	b := &buffered{header: w.Header(), status: http.StatusOK}
	h.ServeHTTP(b, r)
	s.send(w, r, b, shared)
}

// transported is h under transport.
func (s *Server) transported(h http.Handler, shared bool) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { s.transport(w, r, h, shared) })
}

// send sends a buffered answer as the rules above say.
func (s *Server) send(w http.ResponseWriter, r *http.Request, b *buffered, shared bool) {
	hdr := w.Header()
	for k, v := range b.header { // an answer built apart from w (cache.go)
		hdr[k] = v
	}
	body := b.buf.Bytes()
	if compressible(hdr.Get("Content-Type")) && hdr.Get("Content-Encoding") == "" {
		hdr.Add("Vary", "Accept-Encoding") // on a 304 too: it stands for the 200
	}
	kept := b.status == http.StatusOK && (r.Method == http.MethodGet || r.Method == http.MethodHead) &&
		strings.HasPrefix(hdr.Get("Cache-Control"), revalidate)
	s.cacheControl(hdr, r, shared, b.status)
	if kept {
		sum := sha256.Sum256(body)
		tag := `W/"` + hex.EncodeToString(sum[:12]) + `"`
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
	if compressible(hdr.Get("Content-Type")) && hdr.Get("Content-Encoding") == "" {
		if len(body) >= compressMin && acceptsGzip(r) {
			body = gzipped(body)
			hdr.Set("Content-Encoding", "gzip")
		}
	}
	hdr.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(b.status)
	if r.Method != http.MethodHead {
		w.Write(body)
	}
}

// gzipWriters are reused, reset for each body: a writer's tables are most
// of what compressing an answer allocates, and a reset writer writes what
// a new one at its level would.
var gzipWriters = sync.Pool{New: func() any {
	zw, _ := gzip.NewWriterLevel(nil, gzip.DefaultCompression) // the level is valid
	return zw
}}

// gzipped is body compressed with gzip.
func gzipped(body []byte) []byte {
	var z bytes.Buffer
	zw := gzipWriters.Get().(*gzip.Writer)
	zw.Reset(&z)
	zw.Write(body)
	zw.Close()
	zw.Reset(nil) // holds nothing of this body while it waits
	gzipWriters.Put(zw)
	return z.Bytes()
}

// private reports whether r comes with the token or a session: not an
// anonymous reader's, outside the readers' budget (budget.go).
func (s *Server) private(r *http.Request) bool {
	if s.access == TokenRequired || r.Header.Get("Authorization") != "" {
		return true
	}
	_, err := r.Cookie(signin.CookieName)
	return err == nil
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

func compressible(ct string) bool {
	for _, p := range []string{"text/html", "application/json", "text/css", "image/svg+xml", "text/plain", "application/atom+xml", "application/xml"} {
		if strings.HasPrefix(ct, p) {
			return true
		}
	}
	return false
}

// acceptsGzip reads Accept-Encoding: gzip named and not refused (q=0).
func acceptsGzip(r *http.Request) bool {
	for _, part := range strings.Split(r.Header.Get("Accept-Encoding"), ",") {
		name, params, _ := strings.Cut(strings.TrimSpace(part), ";")
		if strings.EqualFold(strings.TrimSpace(name), "gzip") || strings.TrimSpace(name) == "*" {
			q := strings.ReplaceAll(strings.TrimSpace(params), " ", "")
			return q != "q=0" && q != "q=0.0" && q != "q=0.00" && q != "q=0.000"
		}
	}
	return false
}

// buffered holds a handler's answer until transport sends it (an answer
// the handler compressed itself, as the metrics' handler does, is sent as
// it is).
type buffered struct {
	header http.Header
	status int
	buf    bytes.Buffer
	wrote  bool
}

func (b *buffered) Header() http.Header { return b.header }

func (b *buffered) WriteHeader(status int) {
	if !b.wrote {
		b.status, b.wrote = status, true
	}
}

func (b *buffered) Write(p []byte) (int, error) {
	b.WriteHeader(http.StatusOK)
	return b.buf.Write(p)
}

// buildBufs hold a build's bytes (Server.buildAnswer) until newAnswer has
// kept a copy of their size: a page's bytes grown anew at every build were
// most of what a build allocated. A buffer past maxPooledBuild goes with
// its build, so that one large page holds no memory after it.
var buildBufs sync.Pool // *[]byte

const maxPooledBuild = 4 << 20

// pooled is a buffered whose bytes come from buildBufs.
func pooled(b *buffered) *buffered {
	if p, ok := buildBufs.Get().(*[]byte); ok {
		b.buf = *bytes.NewBuffer((*p)[:0])
	}
	return b
}

// release gives b's bytes back to buildBufs: b is not read again.
func (b *buffered) release() {
	if buf := b.buf.Bytes(); cap(buf) <= maxPooledBuild {
		buf = buf[:0]
		buildBufs.Put(&buf)
	}
	b.buf = bytes.Buffer{}
}

// staticFiles serves the stylesheet (and any other static file) under a
// name with its content's hash, cacheable for a year, and under its plain
// name, to be revalidated.
type staticFiles struct {
	fsys   fs.FS
	hashed map[string]string // style.3f2a9c1b.css -> style.css
	names  map[string]string // style.css -> style.3f2a9c1b.css
	etags  map[string]string
}

func newStaticFiles(fsys fs.FS) (*staticFiles, error) {
	sf := &staticFiles{fsys: fsys, hashed: map[string]string{}, names: map[string]string{}, etags: map[string]string{}}
	entries, err := fs.ReadDir(fsys, ".")
	if err != nil {
		return nil, err
	}
	for _, e := range entries {
		if e.IsDir() {
			continue
		}
		b, err := fs.ReadFile(fsys, e.Name())
		if err != nil {
			return nil, err
		}
		sum := sha256.Sum256(b)
		h := hex.EncodeToString(sum[:5])
		ext := path.Ext(e.Name())
		name := strings.TrimSuffix(e.Name(), ext) + "." + h + ext
		sf.hashed[name], sf.names[e.Name()], sf.etags[e.Name()] = e.Name(), name, `"`+h+`"`
	}
	return sf, nil
}

// path is the address of a static file under its hashed name.
func (sf *staticFiles) path(name string) string {
	if h, ok := sf.names[name]; ok {
		return "/static/" + h
	}
	return "/static/" + name
}

func (sf *staticFiles) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	name := strings.TrimPrefix(r.URL.Path, "/static/")
	plain, hashed := sf.hashed[name]
	if !hashed {
		plain = name
	}
	b, err := fs.ReadFile(sf.fsys, plain)
	if err != nil || strings.Contains(plain, "/") {
		http.NotFound(w, r)
		return
	}
	h := w.Header()
	switch ext := path.Ext(plain); ext {
	case ".css":
		h.Set("Content-Type", "text/css; charset=utf-8")
	case ".svg":
		h.Set("Content-Type", "image/svg+xml")
	default:
		h.Set("Content-Type", "application/octet-stream")
	}
	if hashed {
		h.Set("Cache-Control", "public, max-age=31536000, immutable")
		h.Set("ETag", sf.etags[plain])
		if strings.Contains(r.Header.Get("If-None-Match"), sf.etags[plain]) {
			w.WriteHeader(http.StatusNotModified)
			return
		}
	} else {
		h.Set("Cache-Control", revalidate) // transport tags and compares it
		showKeys(h, "static")
	}
	w.Write(b)
}

// cacheFor is the Cache-Control a handler gives an answer: one that may be
// kept is marked so (shared.go says by whom); an error is not kept.
func cacheFor(status int) string {
	if status == http.StatusOK {
		return revalidate
	}
	return "no-store"
}

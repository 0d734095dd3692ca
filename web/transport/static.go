package transport

import (
	"crypto/sha256"
	"encoding/hex"
	"io/fs"
	"net/http"
	"path"
	"strings"

	"github.com/ingestworks/ingest/web/edge"
)

// Static serves the stylesheet (and any other static file) under a
// name with its content's hash, cacheable for a year, and under its plain
// name, to be revalidated.
type Static struct {
	fsys   fs.FS
	hashed map[string]string // style.3f2a9c1b.css -> style.css
	names  map[string]string // style.css -> style.3f2a9c1b.css
	etags  map[string]string
}

// NewStatic serves the files at the top of fsys, each read once here to
// be named by its hash.
func NewStatic(fsys fs.FS) (*Static, error) {
	sf := &Static{fsys: fsys, hashed: map[string]string{}, names: map[string]string{}, etags: map[string]string{}}
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

// Path is the address of a static file under its hashed name.
func (sf *Static) Path(name string) string {
	if h, ok := sf.names[name]; ok {
		return "/static/" + h
	}
	return "/static/" + name
}

func (sf *Static) ServeHTTP(w http.ResponseWriter, r *http.Request) {
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
		h.Set("Cache-Control", Revalidate) // Send tags and compares it
		edge.Show(h, "static")
	}
	w.Write(b)
}

package fakeyt

import (
	"net/http"
	"strconv"
	"strings"
	"sync"

	"github.com/klauspost/compress/gzip"
)

// send writes an answer as the upstream's front end does: gzipped when the
// request both allows gzip (Accept-Encoding) and names it in its
// User-Agent, the two things Google's performance tips say a client must
// do to get a gzip-encoded answer; plain otherwise, as to a client that
// did only one of them. An error's answer is sent the same way, as the
// tips make no exception for it; the charge was made before, whatever the
// encoding.
func (f *Fake) send(w http.ResponseWriter, r *http.Request, status int, body []byte) {
	h := w.Header()
	h.Set("Content-Type", "application/json; charset=UTF-8")
	h.Set("Date", f.date())
	if !wantsGzip(r) {
		w.WriteHeader(status)
		w.Write(body)
		return
	}
	h.Set("Content-Encoding", "gzip")
	w.WriteHeader(status)
	zw := gzipWriters.Get().(*gzip.Writer)
	zw.Reset(w)
	zw.Write(body)
	zw.Close()
	zw.Reset(nil) // holds nothing of this answer while it waits
	gzipWriters.Put(zw)
}

// gzipWriters are reused, each reset for an answer: a writer's tables are
// most of what compressing allocates, and the fake's own work is inside
// every measured day's. The fastest level keeps that work small, and
// klauspost's gzip at it is faster than the standard library's for bytes
// about as few, measured side by side; the upstream's own level is unknown,
// so a measured ratio of bytes is the fast level's, which compresses no
// better than a slower one.
var gzipWriters = sync.Pool{New: func() any {
	zw, _ := gzip.NewWriterLevel(nil, gzip.BestSpeed) // the level is valid
	return zw
}}

// wantsGzip says whether r asked for gzip as the upstream requires it.
func wantsGzip(r *http.Request) bool {
	return strings.Contains(r.Header.Get("User-Agent"), "gzip") && acceptsGzip(r.Header.Get("Accept-Encoding"))
}

// acceptsGzip reads an Accept-Encoding header (RFC 9110): gzip named with
// a weight above zero, or "*" so while gzip is not named.
func acceptsGzip(header string) bool {
	star := false
	for rest := header; rest != ""; {
		var part string
		part, rest, _ = strings.Cut(rest, ",")
		name, params, _ := strings.Cut(part, ";")
		name = strings.TrimSpace(name)
		switch {
		case strings.EqualFold(name, "gzip") || strings.EqualFold(name, "x-gzip"):
			return weighted(params)
		case name == "*":
			star = weighted(params)
		}
	}
	return star
}

// weighted says whether a coding's parameters leave it a weight above
// zero: no q is a weight of 1.
func weighted(params string) bool {
	for rest := params; rest != ""; {
		var p string
		p, rest, _ = strings.Cut(rest, ";")
		k, v, _ := strings.Cut(strings.TrimSpace(p), "=")
		if strings.EqualFold(strings.TrimSpace(k), "q") {
			q, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
			return err == nil && q > 0
		}
	}
	return true
}

package fetch

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/internal/rig/fakeyt"
)

// BenchmarkInflate inflates one chart page, gzipped as the fake sends it
// to the client's fields=, with the standard library's gzip.Reader reused
// and with readAnswer, side by side in one run: the client's time and
// allocations inflating an answer.
func BenchmarkInflate(b *testing.B) {
	q := url.Values{"key": {"k"}, "part": {"snippet,contentDetails,statistics"}, "chart": {"mostPopular"}, "regionCode": {"US"},
		"maxResults": {"50"}, "fields": {ingest.Fields(ingest.Keeps(ingest.OpVideosList))}}
	req := httptest.NewRequest(http.MethodGet, "/youtube/v3/videos?"+q.Encode(), nil)
	askGzip(req)
	rec := httptest.NewRecorder()
	plain, _ := fakeyt.New().ServeAnswer(rec, req)
	zipped := rec.Body.Bytes()
	if !gzipped(rec.Result()) {
		b.Fatal("the fake did not gzip the answer")
	}
	var buf bytes.Buffer
	b.Run("compress-gzip", func(b *testing.B) {
		br, zr := bufio.NewReader(nil), new(gzip.Reader)
		b.ReportAllocs()
		for b.Loop() {
			buf.Reset()
			br.Reset(bytes.NewReader(zipped))
			if err := zr.Reset(br); err != nil {
				b.Fatal(err)
			}
			if _, err := buf.ReadFrom(zr); err != nil || buf.Len() != len(plain) {
				b.Fatal(err)
			}
		}
	})
	b.Run("readAnswer", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			buf.Reset()
			res := &http.Response{Header: http.Header{"Content-Encoding": {"gzip"}}, Body: io.NopCloser(bytes.NewReader(zipped))}
			if err := readAnswer(&buf, res, maxBody); err != nil || buf.Len() != len(plain) {
				b.Fatal(err)
			}
		}
	})
}

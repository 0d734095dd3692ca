package fakeyt

import (
	"bytes"
	stdgzip "compress/gzip"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"

	"github.com/klauspost/compress/gzip"

	"github.com/ingestworks/ingest"
)

// BenchmarkSendGzip compresses one chart page, as the client asks for it
// (fields=), with the standard library's gzip and with the one send uses,
// each at its fastest level and reused as send reuses it: the time an
// answer and the bytes on the wire, side by side in one run.
func BenchmarkSendGzip(b *testing.B) {
	q := url.Values{"key": {key}, "part": {"snippet,contentDetails,statistics"}, "chart": {"mostPopular"}, "regionCode": {"US"},
		"maxResults": {"50"}, "fields": {ingest.Fields(ingest.Keeps(ingest.OpVideosList))}}
	req := httptest.NewRequest(http.MethodGet, basePath+"videos?"+q.Encode(), nil)
	body, _ := New().ServeAnswer(httptest.NewRecorder(), req)
	if len(body) == 0 {
		b.Fatal("no answer to compress")
	}
	std, _ := stdgzip.NewWriterLevel(nil, stdgzip.BestSpeed)
	for _, side := range []struct {
		name string
		zw   interface {
			io.WriteCloser
			Reset(io.Writer)
		}
	}{
		{"stdlib", std},
		{"send", gzipWriters.Get().(*gzip.Writer)},
	} {
		b.Run(side.name, func(b *testing.B) {
			var out bytes.Buffer
			b.ReportAllocs()
			for b.Loop() {
				out.Reset()
				side.zw.Reset(&out)
				side.zw.Write(body)
				side.zw.Close()
			}
			b.ReportMetric(float64(out.Len()), "wire-bytes/call")
			b.ReportMetric(float64(len(body)), "json-bytes/call")
		})
	}
}

package fetch_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"io"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/fetch"
	"github.com/ingestworks/ingest/internal/rig/fakeyt"
)

// BenchmarkChartPageGzip reads one page of a chart, as the client asks for
// it (fields=), through the real client: plain, as the upstream answered
// before the client asked for gzip; gzip, decoded with the client's
// reused inflater; and gzip-new, decoded as Go's transport decodes what
// it asked for itself, with a new inflater an answer. The bytes on the
// wire a call, the client's time and its allocations; the answers are
// recorded once and replayed, so the fake's work is in no side.
func BenchmarkChartPageGzip(b *testing.B) {
	fake := fakeyt.New()
	q := url.Values{"key": {key}, "part": {"snippet,contentDetails,statistics"}, "chart": {"mostPopular"}, "regionCode": {"US"},
		"maxResults": {"50"}, "alt": {"json"}, "fields": {ingest.Fields(ingest.Keeps(ingest.OpVideosList))}}
	plain := serve(b, fake, "/youtube/v3/videos?"+q.Encode(), "")
	zipped := serve(b, fake, "/youtube/v3/videos?"+q.Encode(), "ingest (gzip)")
	for _, side := range []struct {
		name string
		body []byte
		rt   roundTripFunc
	}{
		{"plain", plain, replayAs(plain, "")},
		{"gzip", zipped, replayAs(zipped, "gzip")},
		{"gzip-new", zipped, inflatedAnew(zipped)},
	} {
		b.Run(side.name, func(b *testing.B) {
			c, err := fetch.New(context.Background(), fetch.Options{Now: time.Now, Endpoint: "http://upstream.invalid/", APIKey: key,
				HTTPClient: &http.Client{Transport: side.rt}})
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			for b.Loop() {
				if _, err := c.Trending(context.Background(), nil, "US", ""); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(len(side.body)), "wire-bytes/call")
			b.ReportMetric(float64(len(plain)), "json-bytes/call")
		})
	}
}

// inflatedAnew answers with zipped decoded by a new gzip.Reader, as Go's
// transport hands on an answer it asked gzipped itself.
func inflatedAnew(zipped []byte) roundTripFunc {
	return func(r *http.Request) (*http.Response, error) {
		zr, err := gzip.NewReader(bytes.NewReader(zipped))
		if err != nil {
			return nil, err
		}
		return &http.Response{StatusCode: http.StatusOK, Header: http.Header{"Content-Type": {"application/json; charset=UTF-8"}},
			Body: io.NopCloser(zr), ContentLength: -1, Uncompressed: true, Request: r}, nil
	}
}

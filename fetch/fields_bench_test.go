package fetch_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"
	"time"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/fetch"
	"github.com/ingestworks/ingest/internal/rig/fakeyt"
)

// BenchmarkChartPage reads one page of a chart through the real client,
// its answer as the fake sends it with the client's fields= (fields) and
// without (whole): the bytes each reads a call, and the client's own time
// and allocations turning them into a page. The answers are recorded
// once and replayed, so the fake's work is in neither side.
func BenchmarkChartPage(b *testing.B) {
	fake := fakeyt.New()
	srv := httptest.NewServer(fake)
	defer srv.Close()
	q := url.Values{"key": {key}, "part": {"snippet,contentDetails,statistics"}, "chart": {"mostPopular"},
		"regionCode": {"US"}, "maxResults": {"50"}, "alt": {"json"}}
	whole := record(b, srv.URL+"/youtube/v3/videos?"+q.Encode())
	q.Set("fields", ingest.Fields(ingest.Keeps(ingest.OpVideosList)))
	cut := record(b, srv.URL+"/youtube/v3/videos?"+q.Encode())
	for _, side := range []struct {
		name string
		body []byte
	}{{"whole", whole}, {"fields", cut}} {
		b.Run(side.name, func(b *testing.B) {
			c, err := fetch.New(context.Background(), fetch.Options{Now: time.Now, Endpoint: "http://upstream.invalid/", APIKey: key,
				HTTPClient: &http.Client{Transport: replay(side.body)}})
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			for b.Loop() {
				if _, err := c.Trending(context.Background(), nil, "US", ""); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(len(side.body)), "bytes/call")
		})
	}
}

func record(b *testing.B, u string) []byte {
	res, err := http.Get(u)
	if err != nil {
		b.Fatal(err)
	}
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	if err != nil || res.StatusCode != http.StatusOK {
		b.Fatalf("GET %s: %d %v", u, res.StatusCode, err)
	}
	return body
}

// replay answers every request with body.
func replay(body []byte) roundTripFunc {
	return func(r *http.Request) (*http.Response, error) {
		return &http.Response{StatusCode: http.StatusOK, Header: http.Header{"Content-Type": {"application/json; charset=UTF-8"}},
			Body: io.NopCloser(bytes.NewReader(body)), Request: r}, nil
	}
}

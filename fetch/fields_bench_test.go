package fetch_test

import (
	"bytes"
	"context"
	"encoding/json"
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
			if side.name == "fields" {
				text, values := keptShare(b, side.body)
				b.ReportMetric(float64(text)/float64(len(side.body)), "text-share")
				b.ReportMetric(float64(values)/float64(len(side.body)), "values-share")
			}
		})
	}
}

// keptShare is what of a chart page's answer the store keeps as written:
// text, the bytes of the videos' titles, descriptions, tags and channel
// titles as the answer encodes them; values, the bytes of every value it
// holds (those, the ids, times, counts and the next page's token), without
// the names, quotes and punctuation around them. values is the least an
// answer in JSON holding what is stored could be.
func keptShare(b *testing.B, body []byte) (text, values int) {
	var answer any
	if err := json.Unmarshal(body, &answer); err != nil {
		b.Fatal(err)
	}
	stored := map[string]bool{"title": true, "description": true, "tags": true, "channelTitle": true}
	var walk func(name string, v any, inText bool)
	walk = func(name string, v any, inText bool) {
		switch v := v.(type) {
		case map[string]any:
			for k, x := range v {
				walk(k, x, stored[k])
			}
		case []any:
			for _, x := range v {
				walk(name, x, inText)
			}
		default:
			enc, _ := json.Marshal(v)
			n := len(enc)
			if _, ok := v.(string); ok {
				n -= 2 // the quotes
			}
			values += n
			if inText {
				text += n
			}
		}
	}
	walk("", answer, false)
	return text, values
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

package fetch

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/ingestworks/ingest/internal/rig/fakeyt"
)

// BenchmarkAnswerDecode decodes a chart page and a stats batch, as the fake
// answers the client's own calls (its fields=), with encoding/json and with
// decodeAnswer side by side in one run: the client's time and allocations
// reading an answer once it is inflated.
func BenchmarkAnswerDecode(b *testing.B) {
	rec := &answers{fake: fakeyt.New()}
	c, err := New(context.Background(), Options{Now: time.Now, Endpoint: "http://upstream.invalid/", APIKey: "k",
		HTTPClient: &http.Client{Transport: rec}})
	if err != nil {
		b.Fatal(err)
	}
	p, err := c.Trending(context.Background(), nil, "US", "")
	if err != nil {
		b.Fatal(err)
	}
	ids := make([]string, len(p.Videos))
	for i, v := range p.Videos {
		ids[i] = v.ID
	}
	if _, err := c.Stats(context.Background(), nil, ids); err != nil {
		b.Fatal(err)
	}
	var chart, stats []byte
	for _, a := range rec.seen {
		switch {
		case strings.HasSuffix(a.path, "/videos"):
			chart = a.body
		case strings.HasSuffix(a.path, ":batchGetStats"):
			stats = a.body
		}
	}
	for _, ans := range []struct {
		name string
		body []byte
		into func() any
	}{
		{"chart", chart, func() any { return new(videoAnswer) }},
		{"stats", stats, func() any { return new(statsAnswer) }},
	} {
		for _, side := range []struct {
			name   string
			decode func([]byte, any) error
		}{{"encoding-json", json.Unmarshal}, {"decodeAnswer", decodeAnswer}} {
			b.Run(ans.name+"/"+side.name, func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					if err := side.decode(ans.body, ans.into()); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(len(ans.body)), "json-bytes/answer")
			})
		}
	}
}

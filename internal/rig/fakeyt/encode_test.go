package fakeyt

import (
	"bytes"
	"encoding/json"
	"net/url"
	"testing"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/regions"
)

// everyAnswer is what the fake's handlers answer, whole, for each page of
// every region's chart, each region's categories, a search page, and the
// videos and stats of each region's first page: the values encodeBody
// encodes.
func everyAnswer(tb testing.TB) []any {
	tb.Helper()
	f := New()
	var out []any
	call := func(op string, q url.Values) any {
		q.Set("key", key)
		v, e := handlers[op](f, q)
		if e != nil {
			tb.Fatalf("%s %v: %s", op, q, e.Error.Message)
		}
		out = append(out, v)
		return v
	}
	for _, r := range regions.Builtin {
		if f.ChartLength(r.Code) == 0 {
			continue
		}
		call(ingest.OpCategoriesList, url.Values{"part": {"snippet"}, "regionCode": {r.Code}})
		var first []string
		for token := ""; ; {
			q, _ := url.ParseQuery(chartQuery(r.Code, token))
			var page struct {
				Items []struct {
					ID string `json:"id"`
				} `json:"items"`
				NextPageToken string `json:"nextPageToken"`
			}
			b, _ := json.Marshal(call(ingest.OpVideosList, q))
			if err := json.Unmarshal(b, &page); err != nil {
				tb.Fatal(err)
			}
			if first == nil {
				for _, it := range page.Items {
					first = append(first, it.ID)
				}
			}
			if token = page.NextPageToken; token == "" {
				break
			}
		}
		call(ingest.OpVideosList, url.Values{"part": {"snippet,statistics,contentDetails"}, "id": first})
		call(ingest.OpBatchGetStats, url.Values{"part": {"statistics"}, "id": first})
	}
	call(ingest.OpSearchList, url.Values{"part": {"id"}, "type": {"video"}})
	call(ingest.OpRegionsList, url.Values{"part": {"snippet"}})
	return out
}

// TestAnswersEncodeAsEncodingJSON: each of the fake's answers encodes to
// the bytes encoding/json's Marshal writes, so that the faster encoder
// changes nothing a client reads.
func TestAnswersEncodeAsEncodingJSON(t *testing.T) {
	t.Parallel()
	vs := everyAnswer(t)
	if len(vs) < 50 {
		t.Fatalf("only %d answers", len(vs))
	}
	for _, v := range vs {
		want, wantErr := json.Marshal(v)
		got, gotErr := marshal(v)
		if wantErr != nil || gotErr != nil || !bytes.Equal(got, want) {
			i := 0
			for i < min(len(got), len(want)) && got[i] == want[i] {
				i++
			}
			t.Errorf("%T: encoding/json %v, marshal %v; they part at byte %d:\n%.200q\n%.200q", v, wantErr, gotErr, i, want[i:], got[i:])
		}
	}
}

// BenchmarkEncodeAnswer encodes the first page of the US chart, whole, as
// encodeBody does before its cut: with encoding/json's Encoder and with
// appendJSON side by side in one run.
func BenchmarkEncodeAnswer(b *testing.B) {
	f := New()
	q, _ := url.ParseQuery(chartQuery("US", ""))
	q.Set("key", key)
	v, e := handlers[ingest.OpVideosList](f, q)
	if e != nil {
		b.Fatal(e.Error.Message)
	}
	var buf bytes.Buffer
	b.Run("encoding-json", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			buf.Reset()
			if err := json.NewEncoder(&buf).Encode(v); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(buf.Len()), "json-bytes/answer")
	})
	b.Run("appendJSON", func(b *testing.B) {
		var out []byte
		b.ReportAllocs()
		for b.Loop() {
			var err error
			if out, err = appendJSON(out[:0], v); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(len(out)), "json-bytes/answer")
	})
}

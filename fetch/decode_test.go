package fetch

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ingestworks/ingest/internal/rig/fakeyt"
	"github.com/ingestworks/ingest/regions"
)

// answers records the JSON of every answer the fake sends a client.
type answers struct {
	fake *fakeyt.Fake
	mu   sync.Mutex
	seen []recorded
}

type recorded struct {
	path string
	body []byte
}

func (a *answers) RoundTrip(r *http.Request) (*http.Response, error) {
	rec := httptest.NewRecorder()
	plain, _ := a.fake.ServeAnswer(rec, r)
	if rec.Code == http.StatusOK && r.URL.Query().Get("key") != "" {
		a.mu.Lock()
		a.seen = append(a.seen, recorded{r.URL.Path, plain})
		a.mu.Unlock()
	}
	res := rec.Result()
	res.Request = r
	return res, nil
}

// TestDecodeAnswerReadsAsEncodingJSON: every answer the fake sends the
// client, chart pages of every region it charts, videos by id and stats
// batches, and inputs odder than the fake sends, decode into the same
// values with decodeAnswer as with encoding/json, counts absent apart
// from zero, and are refused with encoding/json's own error.
func TestDecodeAnswerReadsAsEncodingJSON(t *testing.T) {
	t.Parallel()
	rec := &answers{fake: fakeyt.New()}
	c, err := New(context.Background(), Options{Now: time.Now, Endpoint: "http://upstream.invalid/", APIKey: "k",
		HTTPClient: &http.Client{Transport: rec}})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, region := range append(slices.Clone(regions.Default), fakeyt.ExtraRegions...) {
		var ids []string
		for token := ""; ; {
			p, err := c.Trending(ctx, nil, region, token)
			if err != nil {
				t.Fatalf("%s: %v", region, err)
			}
			for _, v := range p.Videos {
				ids = append(ids, v.ID)
			}
			if token = p.NextToken; token == "" {
				break
			}
		}
		if _, err := c.Videos(ctx, nil, ids); err != nil {
			t.Fatalf("%s videos: %v", region, err)
		}
		if _, err := c.Stats(ctx, nil, ids[:min(len(ids), pageSize)]); err != nil {
			t.Fatalf("%s stats: %v", region, err)
		}
	}
	var hidden, stats int
	for _, a := range rec.seen {
		switch {
		case strings.HasSuffix(a.path, "/videos"):
			v := sameDecode[videoAnswer](t, a.body)
			for _, it := range v.Items {
				if it.Statistics != nil && it.Statistics.LikeCount == nil {
					hidden++
				}
			}
		case strings.HasSuffix(a.path, ":batchGetStats"):
			sameDecode[statsAnswer](t, a.body)
			stats++
		}
	}
	if hidden == 0 || stats == 0 {
		t.Errorf("the fake's answers held %d videos with likes hidden and %d stats batches; the comparison needs both", hidden, stats)
	}

	for _, in := range []string{
		`{"items":[{"id":"a","statistics":{"viewCount":"5","likeCount":null}}]}`,
		`{"items":[{"id":"a","statistics":{"viewCount":"0"}}]}`,
		`{"items":[{"id":"a","statistics":{"viewCount":5}}]}`,
		`{"items":[{"id":"a","statistics":{"viewCount":"x"}}]}`,
		`{"items":[{"id":"a","statistics":{"viewCount":""}}]}`,
		`{"items":[{"id":"a","statistics":{"viewCount":"null"}}]}`,
		`{"items":[{"id":"a","statistics":{"viewCount":" 5"}}]}`,
		`{"items":[{"id":"a","statistics":{"viewCount":"5.0"}}]}`,
		`{"items":[{"id":"a","statistics":{"viewCount":"-5"}}]}`,
		`{"items":[{"id":"a","statistics":{"viewCount":"99999999999999999999"}}]}`,
		`{"items":[{"id":"a","statistics":{"viewCount":"\u0035"}}]}`,
		`{"items":[{"id":"a","statistics":null}]}`,
		`{"items":[{"id":"a","Statistics":{"ViewCount":"7"}}]}`,
		`{"items":[{"ID":"a","SNIPPET":{"TITLE":"t"}}]}`,
		`{"items":[{"id":"a","id":"b"}]}`,
		`{"items":[{"id":"a","snippet":{"title":"\ud83d\ude00 \u00e9 \ud800 x"}}]}`,
		"{\"items\":[{\"id\":\"a\",\"snippet\":{\"title\":\"\xff\xfe bad \xc3\"}}]}",
		`{"items":[{"id":"a","snippet":{"title":"a\/b\"c\\d\n\t\b\f\r"}}]}`,
		`{"items":[{"id":"a","snippet":{"tags":["x",null,"y"]}}]}`,
		`{"items":[{"id":"a","snippet":{"tags":null,"publishedAt":null}}]}`,
		`{"items":[{"id":"a","snippet":{"thumbnails":{"default":{"url":"u","width":120}}}}]}`,
		`{"items":[{"id":"a","snippet":{"title":5}}]}`,
		`{"items":[{"id":"a","extra":{"deep":[1,2,{"x":null}]}}],"nextPageToken":"T"}`,
		`{"items":null,"nextPageToken":null}`,
		`{"items":[]}`,
		`{"items":[{"id":"a"}]} trailing`,
		`{"items":[{"id":"a"}]`,
		`{"items":[{"id":"a",}]}`,
		`[]`, `null`, ``, " \n",
	} {
		sameDecode[videoAnswer](t, []byte(in))
		sameDecode[statsAnswer](t, []byte(in))
	}
	// An answer cut short, as the fake cuts one, the last recorded.
	last := rec.seen[len(rec.seen)-1].body
	sameDecode[statsAnswer](t, last[:len(last)/2])
}

// sameDecode decodes body with encoding/json and with decodeAnswer, each
// into a fresh value, and fails t unless both read the same values or
// fail with the same error. The body is overwritten after, as the
// transport reuses its buffer: nothing decoded may still point into it.
func sameDecode[T any](t *testing.T, body []byte) T {
	t.Helper()
	var want, got T
	wantErr := json.Unmarshal(body, &want)
	b := append([]byte(nil), body...)
	gotErr := decodeAnswer(b, &got)
	for i := range b {
		b[i] = 'X'
	}
	if (wantErr == nil) != (gotErr == nil) || (wantErr != nil && wantErr.Error() != gotErr.Error()) || !reflect.DeepEqual(want, got) {
		w, _ := json.Marshal(want)
		g, _ := json.Marshal(got)
		t.Errorf("%.300q:\nencoding/json %v %.300s\ndecodeAnswer  %v %.300s", body, wantErr, w, gotErr, g)
	}
	return got
}

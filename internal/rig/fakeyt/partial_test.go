package fakeyt

import (
	"encoding/json"
	"net/url"
	"reflect"
	"strings"
	"testing"

	"github.com/ingestworks/ingest"
)

// TestFieldsGrammar: what each form of a selection keeps of one answer,
// in the answer's order, and what does not parse.
func TestFieldsGrammar(t *testing.T) {
	t.Parallel()
	const body = `{"kind":"k","etag":"e","nextPageToken":"T","pageInfo":{"totalResults":2,"resultsPerPage":2},` +
		`"items":[{"kind":"v","id":"a","snippet":{"title":"A","tags":["x"],"thumbnails":{"default":{"url":"u","width":120}}},"statistics":{"viewCount":"1"}},` +
		`{"kind":"v","id":"b","snippet":{"title":"B"}}]}`
	cases := []struct{ fields, want string }{
		{"nextPageToken", `{"nextPageToken":"T"}`},
		{"items/id", `{"items":[{"id":"a"},{"id":"b"}]}`},
		{"items(id,snippet/title)", `{"items":[{"id":"a","snippet":{"title":"A"}},{"id":"b","snippet":{"title":"B"}}]}`},
		{"items(id,snippet(title,thumbnails/default/url)),nextPageToken",
			`{"nextPageToken":"T","items":[{"id":"a","snippet":{"title":"A","thumbnails":{"default":{"url":"u"}}}},{"id":"b","snippet":{"title":"B"}}]}`},
		// An object the selection leaves empty is left out.
		{"items(id,statistics/viewCount)", `{"items":[{"id":"a","statistics":{"viewCount":"1"}},{"id":"b"}]}`},
		{"items/snippet/tags", `{"items":[{"snippet":{"tags":["x"]}},{}]}`},
		{"pageInfo,items/id,items/kind", `{"pageInfo":{"totalResults":2,"resultsPerPage":2},"items":[{"kind":"v","id":"a"},{"kind":"v","id":"b"}]}`},
		// The whole of a part, asked beside a piece of it, is whole.
		{"items/snippet/title,items(snippet)", `{"items":[{"snippet":{"title":"A","tags":["x"],"thumbnails":{"default":{"url":"u","width":120}}}},{"snippet":{"title":"B"}}]}`},
		{"items/*/title", `{"items":[{"snippet":{"title":"A"}},{"snippet":{"title":"B"}}]}`},
		{"nothing", `{}`},
	}
	for _, c := range cases {
		sel, err := parseFields(c.fields)
		if err != nil {
			t.Errorf("%s: %v", c.fields, err)
			continue
		}
		got, err := prune([]byte(body), sel)
		if err != nil {
			t.Errorf("%s: prune: %v", c.fields, err)
			continue
		}
		if string(got) != c.want {
			t.Errorf("fields=%s:\n got %s\nwant %s", c.fields, got, c.want)
		}
	}
	// Strings with escapes and brackets inside, spaces between tokens,
	// arrays of arrays and of scalars: stepped over, or copied as they are.
	const odd = `{ "a\"}" : "x\\\"]}" , "b" : [ [ {"c":1,"d":"}"} ], 2 ] , "e":{"f":[true,null]} }`
	for _, c := range []struct{ fields, want string }{
		{"b/c", `{"b":[[{"c":1}]]}`},
		{"b/d,e", `{"b":[[{"d":"}"}]],"e":{"f":[true,null]}}`},
		{"*", `{"a\"}":"x\\\"]}","b":[ [ {"c":1,"d":"}"} ], 2 ],"e":{"f":[true,null]}}`},
	} {
		sel, err := parseFields(c.fields)
		if err != nil {
			t.Fatalf("%s: %v", c.fields, err)
		}
		if got, err := prune([]byte(odd), sel); err != nil || string(got) != c.want {
			t.Errorf("fields=%s of %s:\n got %s (%v)\nwant %s", c.fields, odd, got, err, c.want)
		}
	}
	for _, bad := range []string{"items(", "items(id", "items()", "items)", ",items", "items,", "items//id", "items/", "items(id))", "a b", "items(id)x", "it*ms", ""} {
		if _, err := parseFields(bad); err == nil {
			t.Errorf("fields=%q parsed; the upstream refuses it", bad)
		}
	}
}

// TestFieldsCutTheAnswerNotTheCharge: a chart page asked with fields= is
// the same page cut to the selection, charged as the whole one; a
// selection that does not parse is 400 invalidParameter, charged too.
func TestFieldsCutTheAnswerNotTheCharge(t *testing.T) {
	t.Parallel()
	fx := newFixture(t)
	status, whole := fx.get(t, "/youtube/v3/videos", chartQuery("US", ""))
	if status != 200 {
		t.Fatalf("whole page: status %d", status)
	}
	q, _ := url.ParseQuery(chartQuery("US", ""))
	q.Set("fields", "items(id,statistics(likeCount)),nextPageToken")
	status, part := fx.get(t, "/youtube/v3/videos", q.Encode())
	if status != 200 {
		t.Fatalf("part: status %d: %s", status, part)
	}
	w, p := decode(t, whole), decode(t, part)
	if p.NextPageToken != w.NextPageToken || p.Kind != "" || p.PageInfo.TotalResults != 0 || len(p.Items) != len(w.Items) {
		t.Fatalf("part: token %q kind %q total %d items %d; want token %q, no kind, no pageInfo, %d items",
			p.NextPageToken, p.Kind, p.PageInfo.TotalResults, len(p.Items), w.NextPageToken, len(w.Items))
	}
	hidden := 0
	for i, it := range p.Items {
		stats, _ := w.Items[i]["statistics"].(map[string]any)
		want := map[string]any{"id": w.Items[i]["id"]}
		if likes, ok := stats["likeCount"]; ok {
			want["statistics"] = map[string]any{"likeCount": likes}
		} else {
			hidden++
		}
		if g, _ := json.Marshal(it); string(g) != mustJSON(t, want) {
			t.Errorf("item %d: %s, want %s", i, g, mustJSON(t, want))
		}
	}
	if hidden == 0 {
		t.Errorf("no video hides its likes: the page does not show an emptied statistics left out")
	}
	if len(part) >= len(whole) {
		t.Errorf("part of %d bytes, whole of %d", len(part), len(whole))
	}

	q.Set("fields", "items(id,snippet(title)")
	status, body := fx.get(t, "/youtube/v3/videos", q.Encode())
	e := decodeErr(t, body)
	if status != 400 || e.Error.Errors[0].Reason != "invalidParameter" || !strings.Contains(e.Error.Message, "Invalid field selection") {
		t.Errorf("malformed fields: %d %s, want 400 invalidParameter, an invalid field selection", status, body)
	}
	// A field the answer does not hold is refused and named, as a typo in
	// what a call keeps must not pass for a field the upstream left out.
	q.Set("fields", "items(id,snippet(titel)),nextPageToken")
	status, body = fx.get(t, "/youtube/v3/videos", q.Encode())
	e = decodeErr(t, body)
	if status != 400 || e.Error.Errors[0].Reason != "invalidParameter" || !strings.Contains(e.Error.Message, "items/snippet/titel") {
		t.Errorf("unknown field: %d %s, want 400 invalidParameter naming items/snippet/titel", status, body)
	}
	if c := fx.fake.Charged(key); c != 4 {
		t.Errorf("Charged = %d, want 4: a call costs the same whatever it selects, refused or not", c)
	}
}

// TestWhatEachCallKeepsIsInItsAnswer: the selection every call of the
// worker sends names only fields its answer holds.
func TestWhatEachCallKeepsIsInItsAnswer(t *testing.T) {
	t.Parallel()
	for _, o := range ingest.Operations {
		if _, e := checkFields(o.Name, ingest.Fields(ingest.Keeps(o.Name))); e != nil {
			t.Errorf("%s: %s", o.Name, e.Error.Message)
		}
	}
	for _, c := range []struct{ op, fields, bad string }{
		{ingest.OpVideosList, "items/statistics/viewCount/digits", "items/statistics/viewCount/digits"},
		{ingest.OpVideosList, "items/localizations/de/title", ""},
		{ingest.OpSearchList, "items/id/videoId,pageInfo(totalResults)", ""},
		{ingest.OpSearchList, "items/snippet/tags", "items/snippet/tags"},
		{ingest.OpRegionsList, "items/*/gl", ""},
	} {
		_, e := checkFields(c.op, c.fields)
		switch {
		case c.bad == "" && e != nil:
			t.Errorf("%s fields=%s refused: %s", c.op, c.fields, e.Error.Message)
		case c.bad != "" && (e == nil || !strings.HasSuffix(e.Error.Message, " "+c.bad)):
			t.Errorf("%s fields=%s: %v, want refused naming %s", c.op, c.fields, e, c.bad)
		}
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestFieldsKeptServeEveryCall: a selection read once is handed to every
// later call of its operation as it was read, the same text asked of an
// operation whose answer lacks a field it names is still refused, and a
// refusal is refused again.
func TestFieldsKeptServeEveryCall(t *testing.T) {
	t.Parallel()
	const good = "items(id,snippet(title)),nextPageToken"
	want, e := readFields(ingest.OpVideosList, good)
	if e != nil {
		t.Fatal(e.Error.Message)
	}
	for range 2 {
		if sel, e := checkFields(ingest.OpVideosList, good); e != nil || !reflect.DeepEqual(sel, want) {
			t.Errorf("%s: %v, %v; want %v", good, sel, e, want)
		}
	}
	for range 2 {
		if _, e := checkFields(ingest.OpRegionsList, good); e == nil {
			t.Errorf("%s asked of %s, whose answer has no nextPageToken: not refused", good, ingest.OpRegionsList)
		}
		if _, e := checkFields(ingest.OpVideosList, "items(id"); e == nil {
			t.Errorf("items(id: not refused")
		}
	}
}

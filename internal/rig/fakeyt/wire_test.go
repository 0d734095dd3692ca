package fakeyt

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"testing"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/regions"
)

// rawGet sends path?rawQuery with exactly the headers given, and returns
// the status, the Content-Encoding and the body as it came on the wire.
func (fx *fixture) rawGet(t *testing.T, path, rawQuery string, header map[string]string) (int, string, []byte) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, fx.srv.URL+path+"?"+rawQuery, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("User-Agent", "") // none but what the case sends
	for k, v := range header {
		req.Header.Set(k, v)
	}
	// The transport's own Accept-Encoding and its transparent gunzip off:
	// the case's headers go as they are, and the body comes as sent.
	tr := &http.Transport{DisableCompression: true}
	defer tr.CloseIdleConnections()
	res, err := (&http.Client{Transport: tr}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return res.StatusCode, res.Header.Get("Content-Encoding"), b
}

func gunzip(t *testing.T, b []byte) []byte {
	t.Helper()
	zr, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("an answer that says gzip is not: %v", err)
	}
	plain, err := io.ReadAll(zr)
	if err != nil {
		t.Fatalf("an answer that says gzip is not: %v", err)
	}
	return plain
}

// TestGzipOnlyWhenAskedAsTheUpstreamAsks: every route's answer, errors
// and the discovery document included, comes gzipped only to a request
// that allows gzip and names it in its User-Agent, as Google's front end
// does; decoded, it is the plain answer byte for byte, and a call costs
// the same units whatever its encoding.
func TestGzipOnlyWhenAskedAsTheUpstreamAsks(t *testing.T) {
	t.Parallel()
	fx := newFixture(t)
	routes := []struct{ name, path, query string }{
		{"chart page", "/youtube/v3/videos", chartQuery("US", "") + "&fields=items(id,snippet(title)),nextPageToken"},
		{"videos by id", "/youtube/v3/videos", "part=snippet,statistics&id=a,b&key=" + key},
		{"categories", "/youtube/v3/videoCategories", "part=snippet&regionCode=DE&key=" + key},
		{"regions", "/youtube/v3/i18nRegions", "part=snippet&key=" + key},
		{"search", "/youtube/v3/search", "part=id&type=video&key=" + key},
		{"batchGetStats", "/youtube/v3/videos:batchGetStats", "part=statistics&id=a&key=" + key},
		{"an error (a region without a chart)", "/youtube/v3/videos", chartQuery("ZZ", "")},
		{"an error (a malformed fields=)", "/youtube/v3/videos", chartQuery("US", "") + "&fields=items(id"},
		{"discovery", DiscoveryPath, ""},
	}
	asks := []struct {
		name   string
		header map[string]string
		gzip   bool
	}{
		{"neither", nil, false},
		{"Accept-Encoding alone (Go's transport by itself)", map[string]string{"Accept-Encoding": "gzip", "User-Agent": "google-api-go-client/0.5"}, false},
		{"User-Agent alone", map[string]string{"User-Agent": "my program (gzip)"}, false},
		{"both", map[string]string{"Accept-Encoding": "gzip", "User-Agent": "my program (gzip)"}, true},
		{"both, gzip among others", map[string]string{"Accept-Encoding": "br;q=1.0, gzip;q=0.5, deflate", "User-Agent": "x (gzip)"}, true},
		{"any coding", map[string]string{"Accept-Encoding": "*", "User-Agent": "x (gzip)"}, true},
		{"gzip refused", map[string]string{"Accept-Encoding": "gzip;q=0, *", "User-Agent": "x (gzip)"}, false},
		{"any coding but gzip", map[string]string{"Accept-Encoding": "*;q=0", "User-Agent": "x (gzip)"}, false},
	}
	for _, rt := range routes {
		before := fx.fake.ChargedBuckets(key)
		wantStatus, _, plain := fx.rawGet(t, rt.path, rt.query, nil)
		cost := delta(before, fx.fake.ChargedBuckets(key))
		for _, ask := range asks {
			before := fx.fake.ChargedBuckets(key)
			status, enc, body := fx.rawGet(t, rt.path, rt.query, ask.header)
			if got := delta(before, fx.fake.ChargedBuckets(key)); !maps.Equal(got, cost) {
				t.Errorf("%s, %s: charged %v, plain %v", rt.name, ask.name, got, cost)
			}
			if status != wantStatus {
				t.Errorf("%s, %s: status %d, plain %d", rt.name, ask.name, status, wantStatus)
			}
			if (enc == "gzip") != ask.gzip || (enc != "" && enc != "gzip") {
				t.Errorf("%s, %s: Content-Encoding %q, want gzip %v", rt.name, ask.name, enc, ask.gzip)
				continue
			}
			if enc == "gzip" {
				if len(body) >= len(plain) && len(plain) > 200 {
					t.Errorf("%s, %s: %d bytes gzipped, %d plain", rt.name, ask.name, len(body), len(plain))
				}
				body = gunzip(t, body)
			}
			if !bytes.Equal(body, plain) {
				t.Errorf("%s, %s: the answer differs from the plain one:\n%.200s\n%.200s", rt.name, ask.name, body, plain)
			}
		}
	}
}

// delta is what each bucket was charged from before to after.
func delta(before, after map[string]int64) map[string]int64 {
	out := map[string]int64{}
	for b, n := range after {
		if d := n - before[b]; d != 0 {
			out[b] = d
		}
	}
	return out
}

// TestServeAnswerReturnsWhatIsDecoded: a rig that serves through
// ServeAnswer gets the answer's JSON beside the bytes on the wire.
func TestServeAnswerReturnsWhatIsDecoded(t *testing.T) {
	t.Parallel()
	f := New()
	for _, ua := range []string{"plain", "ingest (gzip)"} {
		req, _ := http.NewRequest(http.MethodGet, basePath+"videos?"+chartQuery("GB", ""), nil)
		req.Header.Set("Accept-Encoding", "gzip")
		req.Header.Set("User-Agent", ua)
		rec := httptest.NewRecorder()
		plain, _ := f.ServeAnswer(rec, req)
		wire := rec.Body.Bytes()
		if rec.Header().Get("Content-Encoding") == "gzip" {
			wire = gunzip(t, wire)
		}
		if len(plain) == 0 || !bytes.Equal(plain, wire) {
			t.Errorf("User-Agent %q: ServeAnswer returned %d bytes, the wire decodes to %d", ua, len(plain), len(wire))
		}
	}
}

// TestServeAnswerSaysItsCut: ServeAnswer says which answers MalformNext
// cut short, those and no other, so that a rig needs no parse of its own
// to tell them.
func TestServeAnswerSaysItsCut(t *testing.T) {
	t.Parallel()
	f := New()
	f.MalformNext(1)
	for i, want := range []bool{true, false} {
		req, _ := http.NewRequest(http.MethodGet, basePath+"videos?"+chartQuery("GB", ""), nil)
		plain, cut := f.ServeAnswer(httptest.NewRecorder(), req)
		if cut != want || json.Valid(plain) == cut {
			t.Errorf("answer %d: cut %v, valid JSON %v; want cut %v", i, cut, json.Valid(plain), want)
		}
	}
	req, _ := http.NewRequest(http.MethodGet, basePath+"videos?key="+key, nil) // an error's answer
	if plain, cut := f.ServeAnswer(httptest.NewRecorder(), req); cut || !json.Valid(plain) {
		t.Errorf("an error's answer: cut %v, valid JSON %v", cut, json.Valid(plain))
	}
}

// TestServeCallNamesTheAnswersIDs: the ids ServeCall says a videos.list
// answer names are those its JSON names, in its order, every page of
// every region's chart with the client's fields= and with none; none for
// an answer cut short, an error's, one whose fields= leaves the ids out,
// or another operation's.
func TestServeCallNamesTheAnswersIDs(t *testing.T) {
	t.Parallel()
	f := New()
	fields := ingest.Fields(ingest.Keeps(ingest.OpVideosList))
	for _, r := range regions.Builtin {
		for _, sel := range []string{fields, ""} {
			for tok, page := "", 0; page == 0 || tok != ""; page++ {
				v := url.Values{"key": {key}, "part": {"snippet,statistics,contentDetails"}, "chart": {"mostPopular"},
					"regionCode": {r.Code}, "maxResults": {"50"}, "pageToken": {tok}, "fields": {sel}}
				req, _ := http.NewRequest(http.MethodGet, basePath+"videos?"+v.Encode(), nil)
				sent := f.ServeCall(httptest.NewRecorder(), req)
				var got struct {
					NextPageToken string
					Items         []struct{ ID string }
				}
				if err := json.Unmarshal(sent.JSON, &got); err != nil {
					t.Fatalf("%s page %d: %v", r.Code, page, err)
				}
				var want []string
				for _, it := range got.Items {
					want = append(want, it.ID)
				}
				if !slices.Equal(sent.IDs, want) {
					t.Errorf("%s page %d, fields %q: ids %v; the JSON names %v", r.Code, page, sel, sent.IDs, want)
				}
				tok = got.NextPageToken
			}
		}
	}
	f.MalformNext(1)
	none := map[string]string{
		"cut short":    basePath + "videos?" + chartQuery("GB", ""),
		"an error":     basePath + "videos?key=" + key,
		"no ids":       basePath + "videos?" + chartQuery("GB", "") + "&fields=items(snippet(title))",
		"another kind": basePath + "videos:batchGetStats?key=" + key + "&part=statistics&id=" + f.Chart("GB")[0].ID,
	}
	for _, name := range []string{"cut short", "an error", "no ids", "another kind"} {
		req, _ := http.NewRequest(http.MethodGet, none[name], nil)
		if sent := f.ServeCall(httptest.NewRecorder(), req); sent.IDs != nil {
			t.Errorf("%s: ids %v, want none (%s)", name, sent.IDs, sent.JSON)
		}
	}
}

package fakeyt

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
)

// skipBytewise is the pruner's skip as it read each string a byte at a
// time: the reference str is measured and checked against.
func (p *pruner) skipBytewise() error {
	p.space()
	depth := 0
	for p.i < len(p.b) {
		switch c := p.b[p.i]; c {
		case '"':
			p.i++
			for p.i < len(p.b) && p.b[p.i] != '"' {
				if p.b[p.i] == '\\' {
					p.i++
				}
				p.i++
			}
			if p.i >= len(p.b) {
				return errCut
			}
			p.i++
		case '{', '[':
			depth++
			p.i++
		case '}', ']':
			if depth == 0 {
				return nil
			}
			depth--
			p.i++
		case ',', ':', ' ', '\t', '\n', '\r':
			if depth == 0 {
				return nil
			}
			p.i++
		default:
			p.i++
		}
		if depth == 0 && p.i > 0 && (p.b[p.i-1] == '"' || p.b[p.i-1] == '}' || p.b[p.i-1] == ']') {
			return nil
		}
	}
	if depth > 0 {
		return errCut
	}
	return nil
}

// wholeAnswers are the fake's answers without fields=: a chart page, the
// categories, a search page and a stats batch, each as it is cut.
func wholeAnswers(tb testing.TB) [][]byte {
	tb.Helper()
	f := New()
	var out [][]byte
	get := func(path string) []byte {
		req := httptest.NewRequest(http.MethodGet, basePath+path, nil)
		b, _ := f.ServeAnswer(httptest.NewRecorder(), req)
		out = append(out, b)
		return b
	}
	var page struct {
		Items []struct {
			ID string `json:"id"`
		} `json:"items"`
	}
	if err := json.Unmarshal(get("videos?"+chartQuery("US", "")), &page); err != nil || len(page.Items) == 0 {
		tb.Fatalf("the chart page: %v", err)
	}
	get("videoCategories?part=snippet&regionCode=FR&key=" + key)
	get("search?part=id&type=video&key=" + key)
	get("videos:batchGetStats?part=statistics&id=" + page.Items[0].ID + "&id=" + page.Items[1].ID + "&key=" + key)
	return out
}

// TestSkipStepsOverWhatTheBytewiseSkipDid: over each of the fake's whole
// answers, texts whose strings escape quotes and backslashes, and
// prefixes of each (an answer cut short), skip stops where the byte-at-a-time
// skip stopped, or fails as it did (where it stops then is read by no
// one), and a whole value ends where encoding/json says it does.
func TestSkipStepsOverWhatTheBytewiseSkipDid(t *testing.T) {
	t.Parallel()
	texts := append(wholeAnswers(t),
		[]byte(`"a\"b"`), []byte(`"a\\"`), []byte(`"\\\""`), []byte(`"\\\\\\"`), []byte(`["\"",{"k\\":"\\\\\""}]`),
		[]byte(`{"t":"\u0022 \"quoted\" \\path\\","n":-1.5e3,"x":[true,false,null]}`), []byte(`12345`), []byte(`""`))
	for _, text := range texts {
		d := json.NewDecoder(bytes.NewReader(text))
		var raw json.RawMessage
		if err := d.Decode(&raw); err != nil {
			t.Fatalf("%.80s: %v", text, err)
		}
		if p := (&pruner{b: text}); p.skip() != nil || p.i != int(d.InputOffset()) {
			t.Errorf("%.80s: skip ends at %d, encoding/json at %d", text, p.i, d.InputOffset())
		}
		stride := 1 // every prefix of a short text, a sample of a long one's
		if len(text) > 1000 {
			stride = 97
		}
		for k := 0; k < len(text); k += stride {
			got, want := &pruner{b: text[:k]}, &pruner{b: text[:k]}
			gotErr, wantErr := got.skip(), want.skipBytewise()
			if gotErr != wantErr || (gotErr == nil && got.i != want.i) {
				t.Errorf("%.80s cut at %d: skip ends at %d (%v), the bytewise skip at %d (%v)", text, k, got.i, gotErr, want.i, wantErr)
				break
			}
		}
	}
}

// BenchmarkSkip steps over the fake's whole chart page, as the cut steps
// over what fields= leaves out, with skip and with the bytewise skip side
// by side in one run.
func BenchmarkSkip(b *testing.B) {
	page := wholeAnswers(b)[0]
	for _, side := range []struct {
		name string
		skip func(*pruner) error
	}{{"bytewise", (*pruner).skipBytewise}, {"skip", (*pruner).skip}} {
		b.Run(side.name, func(b *testing.B) {
			for b.Loop() {
				if p := (&pruner{b: page}); side.skip(p) != nil || p.i != len(page) {
					b.Fatal("the page was not stepped over whole")
				}
			}
			b.ReportMetric(float64(len(page)), "json-bytes/answer")
		})
	}
}

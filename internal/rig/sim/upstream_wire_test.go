package sim

import (
	"compress/gzip"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"slices"
	"testing"

	"github.com/ingestworks/ingest/costs"
)

// TestTheUpstreamReadsItsAnswersDecoded: a chart page the daemon's
// client asks gzipped is kept with its bytes on the wire and its JSON's,
// read whole (not cut), with the ids it names, and its first video is
// the one the upstream forgets; only an answer the fake cut is cut, and
// names none.
func TestTheUpstreamReadsItsAnswersDecoded(t *testing.T) {
	u := NewUpstream(1, costs.Default())
	q := url.Values{"key": {"k"}, "part": {"snippet,statistics"}, "chart": {"mostPopular"}, "regionCode": {"US"}, "maxResults": {"50"}}
	ask := func() *http.Response {
		req, _ := http.NewRequest(http.MethodGet, "http://upstream.invalid/youtube/v3/videos?"+q.Encode(), nil)
		req.Header.Set("Accept-Encoding", "gzip")
		req.Header.Set("User-Agent", "ingest (gzip)")
		res, err := u.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	res := ask()
	zr, err := gzip.NewReader(res.Body)
	if err != nil || res.Header.Get("Content-Encoding") != "gzip" {
		t.Fatalf("the answer to a client that asks gzipped: %q, %v", res.Header.Get("Content-Encoding"), err)
	}
	var page struct{ Items []struct{ ID string } }
	if b, err := io.ReadAll(zr); err != nil || json.Unmarshal(b, &page) != nil || len(page.Items) == 0 {
		t.Fatalf("the answer decoded: %v", err)
	}
	c := u.Calls()[0]
	if c.Cut || c.Kind != KindChart || c.Bytes <= 0 || c.JSON <= c.Bytes {
		t.Errorf("the call kept: cut %v, kind %q, %d bytes on the wire, %d of JSON", c.Cut, c.Kind, c.Bytes, c.JSON)
	}
	ids := make([]string, len(page.Items))
	for i, it := range page.Items {
		ids[i] = it.ID
	}
	if !slices.Equal(c.IDs, ids) {
		t.Errorf("the call kept the ids %v, the page names %v", c.IDs, ids)
	}
	if gone := u.Forgotten(); len(gone) != 1 || gone[0].ID != page.Items[0].ID {
		t.Errorf("forgotten %v, want the page's first video %s", gone, page.Items[0].ID)
	}
	u.Fake.MalformNext(1)
	ask()
	if c := u.Calls()[1]; !c.Cut || c.IDs != nil {
		t.Errorf("an answer the fake cut short: kept cut %v, with ids %v", c.Cut, c.IDs)
	}
}

package web

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/ingestworks/ingest/clock"
	"github.com/ingestworks/ingest/internal/rig/storetest"
)

// benchChart is a chart answer of n entries, as the API's chart route
// sends one.
func benchChart(n int) ChartJSON {
	c := ChartJSON{Region: "US", RunID: 7, Status: "ok", Complete: true, Entries: []EntryJSON{}}
	for i := range n {
		views := int64(1000 * i)
		c.Entries = append(c.Entries, EntryJSON{Rank: i + 1, VideoCard: VideoCard{ID: fmt.Sprintf("vid%08d", i),
			Title: "A video's title, <with> \"quotes\" & more", Channel: "A channel", ChannelID: "UC0123456789",
			Duration: "PT4M13S", Thumbnail: "https://i.ytimg.com/vi/x/default.jpg"}, Views: &views, ViewTrend: []int64{1, 2, 3}})
	}
	return c
}

// replyBefore is replyJSON as it was before its encoder and buffer were
// kept between answers: an encoder made for each.
func replyBefore(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.Encode(v)
}

// TestReplyJSONAsBefore holds the kept encoder's bytes to those of an
// encoder made for the answer, for answers of every size in turn, a small
// one after a large one included, and a value that does not encode to
// nothing.
func TestReplyJSONAsBefore(t *testing.T) {
	for _, v := range []any{benchChart(200), benchChart(1), map[string]string{"a": "<b>"}, benchChart(0), func() {}, []int{}} {
		got, want := httptest.NewRecorder(), httptest.NewRecorder()
		replyJSON(got, http.StatusOK, v)
		replyBefore(want, http.StatusOK, v)
		if !bytes.Equal(got.Body.Bytes(), want.Body.Bytes()) {
			t.Fatalf("replyJSON(%T) wrote\n%.300s\nwant\n%.300s", v, got.Body.Bytes(), want.Body.Bytes())
		}
	}
}

// discard is a response that keeps nothing of what it is written.
type discard struct{ h http.Header }

func (d discard) Header() http.Header         { return d.h }
func (d discard) Write(p []byte) (int, error) { return len(p), nil }
func (d discard) WriteHeader(int)             {}

// BenchmarkReplyJSON sends a chart answer of fifty entries with the kept
// encoder and buffer and, in the same loop, with an encoder made for it as
// before: "alloc-new/kept" is how many more bytes the new encoders
// allocated, "new/kept" how many times longer they took.
func BenchmarkReplyJSON(b *testing.B) {
	v := benchChart(50)
	var took [2]time.Duration
	var alloc [2]uint64
	measure := func(i int, f func(http.ResponseWriter, int, any)) {
		var m0, m1 runtime.MemStats
		runtime.ReadMemStats(&m0)
		start := time.Now()
		f(discard{http.Header{}}, http.StatusOK, v)
		took[i] += time.Since(start)
		runtime.ReadMemStats(&m1)
		alloc[i] += m1.TotalAlloc - m0.TotalAlloc
	}
	for b.Loop() {
		measure(0, replyJSON)
		measure(1, replyBefore)
	}
	b.ReportMetric(float64(alloc[1])/float64(alloc[0]), "alloc-new/kept")
	b.ReportMetric(float64(took[1])/float64(took[0]), "new/kept")
}

// renderBefore is render as it was before its buffer was kept between
// builds: a buffer grown from nothing for each page.
func (s *Server) renderBefore(w http.ResponseWriter, status int, name string, data any) {
	var buf bytes.Buffer
	if err := s.pages.byName[name].Execute(&buf, data); err != nil {
		http.Error(w, "internal error", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	w.Write(buf.Bytes())
}

// BenchmarkRender builds a page (the error page, with the layout every
// page shares) into the kept buffer and, in the same loop, into a buffer
// grown for it as before: "alloc-new/kept" is how many more bytes the new
// buffers allocated, "new/kept" how many times longer they took.
func BenchmarkRender(b *testing.B) {
	s, err := New(Config{DB: storetest.Open(b), Listen: "127.0.0.1:0", Clock: clock.System})
	if err != nil {
		b.Fatal(err)
	}
	r := httptest.NewRequest(http.MethodGet, "/nowhere", nil)
	v := errorView{Title: "Not Found", Status: http.StatusNotFound, Message: strings.Repeat("no such page; ", 200)}
	var took [2]time.Duration
	var alloc [2]uint64
	measure := func(i int, f func(w http.ResponseWriter)) {
		var m0, m1 runtime.MemStats
		runtime.ReadMemStats(&m0)
		start := time.Now()
		f(discard{http.Header{}})
		took[i] += time.Since(start)
		runtime.ReadMemStats(&m1)
		alloc[i] += m1.TotalAlloc - m0.TotalAlloc
	}
	for b.Loop() {
		measure(0, func(w http.ResponseWriter) { s.render(w, r, http.StatusNotFound, "error", v) })
		measure(1, func(w http.ResponseWriter) { s.renderBefore(w, http.StatusNotFound, "error", v) })
	}
	b.ReportMetric(float64(alloc[1])/float64(alloc[0]), "alloc-new/kept")
	b.ReportMetric(float64(took[1])/float64(took[0]), "new/kept")
}

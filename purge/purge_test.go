package purge

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// recorder is a cache that records each purge's keys, answering status
// (then 200) for the first fails, and waiting for hold (when set) first.
type recorder struct {
	srv   *httptest.Server
	got   chan string
	fails atomic.Int64
	hold  chan struct{}
}

func newRecorder(t *testing.T, status int, fails int64, hold chan struct{}) *recorder {
	t.Helper()
	r := &recorder{got: make(chan string, 256), hold: hold}
	r.fails.Store(fails)
	r.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if r.hold != nil {
			<-r.hold
		}
		if req.Method != "PURGE" || req.Header.Get("Surrogate-Key") != req.Header.Get("xkey-purge") {
			t.Errorf("%s with Surrogate-Key %q, xkey-purge %q; want PURGE with the same keys in both", req.Method,
				req.Header.Get("Surrogate-Key"), req.Header.Get("xkey-purge"))
		}
		if r.fails.Add(-1) >= 0 {
			w.WriteHeader(status)
			return
		}
		r.got <- req.Header.Get("Surrogate-Key")
	}))
	t.Cleanup(r.srv.Close)
	return r
}

func (r *recorder) url() *url.URL { u, _ := url.Parse(r.srv.URL + "/"); return u }

// next is the keys of the next purge r took.
func (r *recorder) next(t *testing.T) string {
	t.Helper()
	select {
	case k := <-r.got:
		return k
	case <-time.After(time.Minute): // the fault: the purge never came
		t.Fatal("no purge came")
		return ""
	}
}

// settled is s's figures once done says they are, or after a minute (the
// fault) as they are: a cache has its answer before the sender counts it.
func settled(s *Sender, done func(Figures) bool) Figures {
	for end := time.Now().Add(time.Minute); ; time.Sleep(10 * time.Millisecond) {
		if f := s.Figures(); done(f) || time.Now().After(end) {
			return f
		}
	}
}

// TestEveryCacheIsPurgedAndAFailureTriedAgain: each batch reaches every
// cache as PURGE with its keys; a cache that fails is tried again until it
// takes it, counted; a long list of keys goes in several requests, each a
// header a cache takes.
func TestEveryCacheIsPurgedAndAFailureTriedAgain(t *testing.T) {
	t.Parallel()
	ok, flaky := newRecorder(t, 0, 0, nil), newRecorder(t, http.StatusServiceUnavailable, 2, nil)
	s := New([]*url.URL{ok.url(), flaky.url()}, slog.New(slog.DiscardHandler))
	defer s.Close()
	s.Send([]string{"chart:US", "video:a"})
	for _, r := range []*recorder{ok, flaky} {
		if got := r.next(t); got != "chart:US video:a" {
			t.Errorf("%s took %q, want chart:US video:a", r.srv.URL, got)
		}
	}
	if f := settled(s, func(f Figures) bool { return f.Sent == 2 }); f.Sent != 2 || f.Retried != 2 || f.Failed != 0 {
		t.Errorf("figures %+v, want 2 sent, 2 retried, none failed", f)
	}
	var many []string
	for i := range 1000 {
		many = append(many, fmt.Sprintf("video:%011d", i))
	}
	s.Send(many)
	var took []string
	for len(took) < len(many) {
		got := ok.next(t)
		if len(got) > maxHeader {
			t.Errorf("a purge of %d bytes of keys, want at most %d", len(got), maxHeader)
		}
		took = append(took, strings.Fields(got)...)
	}
	if !slices.Equal(took, many) {
		t.Errorf("took %d keys, want the %d sent, in order", len(took), len(many))
	}
}

// TestACacheDownDelaysNoOther: a cache that does not answer holds up
// only its own queue; when that overflows, its next purge is the whole
// site, counted, rather than a landing lost in silence.
func TestACacheDownDelaysNoOther(t *testing.T) {
	t.Parallel()
	hold := make(chan struct{})
	down, up := newRecorder(t, 0, 0, hold), newRecorder(t, 0, 0, nil)
	s := New([]*url.URL{down.url(), up.url()}, slog.New(slog.DiscardHandler))
	defer s.Close()
	s.Send([]string{"chart:US"})
	if got := up.next(t); got != "chart:US" {
		t.Errorf("the cache up took %q, want chart:US", got)
	}
	for i := range queued + 2 { // the down cache's sender holds one; its queue fills and loses one
		s.Send([]string{"chart:GB", string(rune('a' + i%26))})
	}
	if f := s.Figures(); f.Overflowed == 0 {
		t.Errorf("figures %+v: no batch overflowed the down cache's queue", f)
	}
	close(hold)
	seen := map[string]bool{}
	for range queued + 1 {
		seen[down.next(t)] = true
	}
	if !seen[SiteKey] {
		t.Errorf("after its queue overflowed, the cache took no purge of %q", SiteKey)
	}
}

// TestPurgeSaysWhetherTheCacheTookIt: Purge returns once the cache took
// the keys, after its failures tried again, and with an error once every
// attempt failed, so that its caller keeps what a cache was purged up to
// only when it was; each cache is named without its password.
func TestPurgeSaysWhetherTheCacheTookIt(t *testing.T) {
	t.Parallel()
	flaky, down := newRecorder(t, http.StatusServiceUnavailable, 2, nil), newRecorder(t, http.StatusForbidden, attempts, nil)
	secret := down.url()
	secret.User = url.UserPassword("purger", "purge-Sekret-42")
	s := New([]*url.URL{flaky.url(), secret}, slog.New(slog.DiscardHandler))
	defer s.Close()
	if err := s.Purge(context.Background(), 0, []string{"chart:US"}); err != nil {
		t.Errorf("a cache that failed twice then took it: %v, want nil", err)
	}
	if got := flaky.next(t); got != "chart:US" {
		t.Errorf("the cache took %q, want chart:US", got)
	}
	if err := s.Purge(context.Background(), 1, []string{"chart:US"}); err == nil {
		t.Errorf("a cache that refused every attempt: nil, want an error")
	}
	if names := s.Caches(); len(names) != 2 || strings.Contains(names[1], "purge-Sekret-42") {
		t.Errorf("caches named %q, want two, no password", names)
	}
	if f := s.Figures(); f.Sent != 1 || f.Failed != 1 || f.Retried != 2+attempts-1 {
		t.Errorf("figures %+v, want 1 sent, 1 failed, %d retried", f, 2+attempts-1)
	}
}

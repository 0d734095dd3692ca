package sim

import (
	"net/http"
	"net/http/httptest"
	"sync"
	"time"

	"github.com/ingestworks/ingest/internal/fakeyt"
)

// Upstream is the fake upstream answering in the process: the daemon's
// requests reach its handler through a transport, with no socket, which
// would not let virtual time pass. It keeps, after each request with a
// key, the fake's own count of what every bucket was charged so far: the
// history the checker reads the upstream's spending from.
type Upstream struct {
	Fake *fakeyt.Fake

	mu    sync.Mutex
	calls []Call
}

// Call is one request the fake answered with a key: when, its path, its
// status, and the fake's count of each bucket's charge once it answered.
type Call struct {
	At      time.Time
	Path    string
	Status  int
	Charged map[string]int64
}

// NewUpstream is a fresh fake upstream that answers in process.
func NewUpstream() *Upstream { return &Upstream{Fake: fakeyt.New()} }

// RoundTrip answers req with the fake's handler.
func (u *Upstream) RoundTrip(req *http.Request) (*http.Response, error) {
	if err := req.Context().Err(); err != nil {
		return nil, err
	}
	rec := httptest.NewRecorder()
	u.Fake.ServeHTTP(rec, req)
	if req.URL.Query().Get("key") != "" {
		u.mu.Lock()
		u.calls = append(u.calls, Call{At: time.Now(), Path: req.URL.Path, Status: rec.Code, Charged: u.Fake.ChargedPools()})
		u.mu.Unlock()
	}
	res := rec.Result()
	res.Request = req
	return res, nil
}

// Calls is every keyed request answered so far, in order.
func (u *Upstream) Calls() []Call {
	u.mu.Lock()
	defer u.mu.Unlock()
	return append([]Call(nil), u.calls...)
}

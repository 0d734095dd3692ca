package sim

import (
	"encoding/json"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"sync"
	"time"

	"github.com/ingestworks/ingest/internal/rig/fakeyt"
)

// Upstream is the fake upstream answering in the process: the daemon's
// requests reach its handler through a transport, with no socket, which
// would not let virtual time pass. It keeps, after each request with a
// key, the fake's own count of what every bucket was charged so far: the
// history the checker reads the upstream's spending from.
type Upstream struct {
	Fake *fakeyt.Fake

	mu     sync.Mutex
	calls  []Call
	hold   *hold      // the next chart page's answer is held
	jitter *rand.Rand // the daemon's retry waits, from the seed
}

// hold is a chart page's answer the upstream keeps back for a while once
// it has charged the call, so that a pass has it on the wire.
type hold struct {
	d    time.Duration
	held chan Held
}

// Held is a chart page held on the wire: when the upstream charged it,
// the chart it is of, and the first video it names.
type Held struct {
	At               time.Time
	Region, Category string
	First            string
}

// Call is one request the fake answered with a key: when, its path, its
// status, the bytes of its answer's body, whether it asked for a chart
// page, and the fake's count of each bucket's charge once it answered.
type Call struct {
	At      time.Time
	Path    string
	Status  int
	Bytes   int
	Chart   bool
	Charged map[string]int64
}

// NewUpstream is a fresh fake upstream that answers in process.
func NewUpstream(seed uint64) *Upstream {
	return &Upstream{Fake: fakeyt.New(), jitter: rand.New(rand.NewPCG(seed, 0x717e4))}
}

// Jitter draws a retry's jitter in [0, n) for every process of the
// simulation (wiring.Host.Jitter), from the seed: a seed replays the
// same waits, where the process's own random source would draw others
// on every run.
func (u *Upstream) Jitter(n int64) int64 {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.jitter.Int64N(n)
}

// RoundTrip answers req with the fake's handler.
func (u *Upstream) RoundTrip(req *http.Request) (*http.Response, error) {
	if err := req.Context().Err(); err != nil {
		return nil, err
	}
	rec := httptest.NewRecorder()
	u.Fake.ServeHTTP(rec, req)
	q := req.URL.Query()
	var h *hold
	if q.Get("key") != "" {
		u.mu.Lock()
		u.calls = append(u.calls, Call{At: time.Now(), Path: req.URL.Path, Status: rec.Code, Bytes: rec.Body.Len(),
			Chart: q.Get("chart") == "mostPopular", Charged: u.Fake.ChargedPools()})
		if u.hold != nil && rec.Code == http.StatusOK && q.Get("chart") == "mostPopular" {
			h, u.hold = u.hold, nil
		}
		u.mu.Unlock()
	}
	if h != nil {
		h.held <- Held{At: time.Now(), Region: q.Get("regionCode"), Category: q.Get("videoCategoryId"), First: firstID(rec.Body.Bytes())}
		select {
		case <-time.After(h.d):
		case <-req.Context().Done(): // the client gave up: the call stays charged
			return nil, req.Context().Err()
		}
	}
	res := rec.Result()
	res.Request = req
	return res, nil
}

// Hold has the upstream keep back the next chart page it answers with 200
// for d once it has charged it (or until its client gives up), and say so
// on the channel it returns.
func (u *Upstream) Hold(d time.Duration) <-chan Held {
	h := &hold{d: d, held: make(chan Held, 1)}
	u.mu.Lock()
	u.hold = h
	u.mu.Unlock()
	return h.held
}

// Unhold disarms a Hold no page met.
func (u *Upstream) Unhold() {
	u.mu.Lock()
	u.hold = nil
	u.mu.Unlock()
}

// firstID is the first video a page of the chart names.
func firstID(body []byte) string {
	var page struct {
		Items []struct {
			ID string `json:"id"`
		} `json:"items"`
	}
	if json.Unmarshal(body, &page) != nil || len(page.Items) == 0 {
		return ""
	}
	return page.Items[0].ID
}

// Calls is every keyed request answered so far, in order.
func (u *Upstream) Calls() []Call {
	u.mu.Lock()
	defer u.mu.Unlock()
	return append([]Call(nil), u.calls...)
}

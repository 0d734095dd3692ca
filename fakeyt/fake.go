// Package fakeyt is the project's fake YouTube Data API v3: an http.Handler
// that serves the real JSON shapes (counts as strings, absent counts when an
// owner hides them, opaque page tokens) and the real error bodies, and
// counts the units each key was charged.
//
// Tests serve it with httptest and point the real
// google.golang.org/api/youtube/v3 client at srv.URL + "/"; cmd/fakeyt serves
// it for the demo. Hooks inject faults (latency, 5xx bursts, the three quota
// shapes, rejected keys, missing charts, stale page tokens, malformed
// bodies). Every hook is safe to call while requests are in flight.
//
// The fixtures are deterministic: eight regions whose charts differ in
// length (ChartLengths), titles in English, German, French, Portuguese and
// Hindi, and a search corpus spread over the twelve months before Anchor.
package fakeyt

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Operation names, as costs.yaml spells them.
const (
	OpVideos     = "videos.list"
	OpCategories = "videoCategories.list"
	OpSearch     = "search.list"
)

// costs is what the real API charges per call, failed calls included.
var costs = map[string]int64{OpVideos: 1, OpCategories: 1, OpSearch: 100}

var paths = map[string]string{
	"/youtube/v3/videos":          OpVideos,
	"/youtube/v3/videoCategories": OpCategories,
	"/youtube/v3/search":          OpSearch,
}

// Fake is the fake upstream. The zero value is not usable; call New.
type Fake struct {
	fx       *fixtures
	latency  atomic.Int64
	requests atomic.Int64
	epoch    atomic.Uint32

	mu        sync.Mutex
	keys      map[string]bool // nil: any non-empty key is valid
	keyFault  KeyFault
	quota     QuotaShape
	dailyCap  int64 // 0: none
	failNext  int
	failCode  int
	malformed int
	noChart   map[string]bool
	charged   map[string]map[string]int64 // key -> op -> units
}

var (
	fixturesOnce sync.Once
	shared       *fixtures
)

// New returns a fake that accepts any non-empty key, with no faults.
func New() *Fake {
	fixturesOnce.Do(func() { shared = buildFixtures() })
	f := &Fake{fx: shared, noChart: map[string]bool{}, charged: map[string]map[string]int64{}}
	f.epoch.Store(1)
	return f
}

// SetLatency delays every response by d (the request's context still
// cancels the wait).
func (f *Fake) SetLatency(d time.Duration) { f.latency.Store(int64(d)) }

// AllowKeys makes only these keys valid; any other is 400 API_KEY_INVALID.
// With no arguments, any non-empty key is valid again.
func (f *Fake) AllowKeys(keys ...string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.keys = nil
	if len(keys) > 0 {
		f.keys = map[string]bool{}
		for _, k := range keys {
			f.keys[k] = true
		}
	}
}

// BadKey makes every request fail as the API does for a rejected key;
// KeyOK clears it.
func (f *Fake) BadKey(fault KeyFault) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.keyFault = fault
}

// FailNext makes the next n requests fail with status: 500 or 503 send
// backendError, 429 a transient per-minute rateLimitExceeded.
func (f *Fake) FailNext(n, status int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.failNext, f.failCode = n, status
}

// ExhaustQuota makes requests fail with shape until it is called with
// QuotaOK. SearchPerDay fails search.list only.
func (f *Fake) ExhaustQuota(shape QuotaShape) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.quota = shape
}

// SetDailyQuota makes a key's requests fail with 403 quotaExceeded once it
// has been charged units or more; 0 removes the cap.
func (f *Fake) SetDailyQuota(units int64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.dailyCap = units
}

// NoChart makes the regions' charts answer videoChartNotFound.
func (f *Fake) NoChart(regions ...string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, r := range regions {
		f.noChart[strings.ToUpper(r)] = true
	}
}

// InvalidateTokens makes every page token issued so far invalid: its next
// use answers invalidPageToken. Tokens issued afterwards work.
func (f *Fake) InvalidateTokens() { f.epoch.Add(1) }

// MalformNext makes the next n successful responses carry a truncated JSON
// body with status 200.
func (f *Fake) MalformNext(n int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.malformed = n
}

// ClearFaults removes every injected fault (not the latency, the key list
// or the accounting).
func (f *Fake) ClearFaults() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.keyFault, f.quota, f.dailyCap = KeyOK, QuotaOK, 0
	f.failNext, f.malformed = 0, 0
	f.noChart = map[string]bool{}
}

// Charged returns the units charged to key, failed calls included.
func (f *Fake) Charged(key string) int64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	var n int64
	for _, u := range f.charged[key] {
		n += u
	}
	return n
}

// ChargedByOp returns the units charged to key per operation.
func (f *Fake) ChargedByOp(key string) map[string]int64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := map[string]int64{}
	for op, u := range f.charged[key] {
		out[op] = u
	}
	return out
}

// Requests returns how many requests the fake has received, on any path.
func (f *Fake) Requests() int64 { return f.requests.Load() }

// ChartLength returns how many videos region's chart holds (0: no chart).
func (f *Fake) ChartLength(region string) int { return len(f.fx.charts[region]) }

// ServeHTTP answers one request of the YouTube Data API v3.
func (f *Fake) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	f.requests.Add(1)
	status, body := f.respond(r)
	// The latency runs from the request's arrival, so that the fake's own
	// work is inside it, as the upstream's is.
	if !f.wait(r.Context(), start) {
		return
	}
	w.Header().Set("Content-Type", "application/json; charset=UTF-8")
	w.WriteHeader(status)
	w.Write(body)
}

// respond charges the call and builds its answer: an injected fault, an
// error of the request, or the page.
func (f *Fake) respond(r *http.Request) (int, []byte) {
	op, ok := paths[strings.TrimSuffix(r.URL.Path, "/")]
	if !ok || (r.Method != http.MethodGet && r.Method != http.MethodHead) {
		return encode(http.StatusNotFound, errNotFound(r.URL.Path))
	}
	q := r.URL.Query()
	key := q.Get("key")
	overCap := f.charge(key, op)
	if e := f.fault(key, op, overCap); e != nil {
		return encode(e.Error.Code, e)
	}
	body, e := f.answer(op, q)
	if e != nil {
		return encode(e.Error.Code, e)
	}
	return f.encodeBody(body)
}

// charge records what the call costs and says whether the key was already
// over its daily cap.
func (f *Fake) charge(key, op string) (overCap bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	m := f.charged[key]
	if m == nil {
		m = map[string]int64{}
		f.charged[key] = m
	}
	var before int64
	for _, u := range m {
		before += u
	}
	m[op] += costs[op]
	return f.dailyCap > 0 && before >= f.dailyCap
}

// wait holds the answer until the latency has passed since start.
func (f *Fake) wait(ctx context.Context, start time.Time) bool {
	d := time.Until(start.Add(time.Duration(f.latency.Load())))
	if d <= 0 {
		return true
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// fault returns the injected error this request must get, if any. The real
// API checks the key first, then its own health, then the quota.
func (f *Fake) fault(key, op string, overCap bool) *apiError {
	f.mu.Lock()
	defer f.mu.Unlock()
	switch {
	case key == "":
		return errMissingKey()
	case f.keyFault != KeyOK:
		return errKey(f.keyFault)
	case f.keys != nil && !f.keys[key]:
		return errKey(KeyInvalid)
	case f.failNext > 0:
		f.failNext--
		return errBackend(f.failCode)
	case f.quota == SearchPerDay && op == OpSearch:
		return errQuota(SearchPerDay)
	case f.quota == QuotaExceeded || f.quota == DailyLimitExceeded:
		return errQuota(f.quota)
	case overCap:
		return errQuota(QuotaExceeded)
	}
	return nil
}

func (f *Fake) chartMissing(region string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.noChart[region]
}

// encodeBody encodes a successful answer, truncated when MalformNext asks.
func (f *Fake) encodeBody(v any) (int, []byte) {
	b, err := json.Marshal(v)
	if err != nil {
		return encode(http.StatusInternalServerError, errBackend(http.StatusInternalServerError))
	}
	f.mu.Lock()
	if f.malformed > 0 {
		f.malformed--
		b = b[:len(b)/2]
	}
	f.mu.Unlock()
	return http.StatusOK, b
}

func encode(status int, v any) (int, []byte) {
	b, _ := json.Marshal(v)
	return status, b
}

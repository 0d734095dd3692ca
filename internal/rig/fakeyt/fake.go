// Package fakeyt is the project's fake YouTube Data API v3: an http.Handler
// that serves the real JSON shapes (counts as strings, absent counts when an
// owner hides them, opaque page tokens, an answer cut to what fields= asks,
// partial.go) and the real error bodies, gzipped to a client that asks as
// the upstream's front end wants it asked (wire.go), and
// counts what each key was charged, per operation and per quota bucket, in
// the upstream's 2026 model (BucketDefault, BucketSearch, BucketStats).
//
// Tests serve it with httptest and point the real
// google.golang.org/api/youtube/v3 client at srv.URL + "/"; cmd/fakeyt serves
// it for the demo. Hooks inject faults (latency, 5xx bursts, the quota
// shapes, per-bucket caps, rejected keys, missing charts, stale page tokens,
// malformed bodies). Every hook is safe to call while requests are in flight.
//
// The fixtures are deterministic: a chart for every region of the
// catalogue (regions.Builtin), which i18nRegions.list names. The default
// regions' charts (ChartLengths) and the extra regions' (ExtraRegions) are
// handcrafted, with a search corpus spread over the twelve months before
// Anchor; every other region's is generated from its code on first use,
// in the scripts its real chart carries, 200 videos long or shorter
// (ShortCharts). A code outside the catalogue has no chart, as upstream.
//
// What is where: the fake YouTube Data API that tests and make demo run
// against: it serves each operation of the registry at its path and charges
// its cost, and the API's discovery document, free, with the Date the
// upstream's clock is read by; a chart for every region of the catalogue,
// the handcrafted ones built at start and the rest generated on first use.
package fakeyt

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	fastjson "github.com/segmentio/encoding/json"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/regions"
)

// The upstream's quota buckets (the 2026 model), named as the pools of
// costs.yaml so that tests can hold the fake's charges against the ledger's.
const (
	BucketDefault = "default" // 10,000 units a day, most methods
	BucketSearch  = "search"  // 100 search.list calls a day
	BucketStats   = "stats"   // 10,000 videos.batchGetStats units a day
)

// DailyLimits are the buckets' sizes at the upstream. The fake does not
// enforce them on its own; SetBucketQuota does, over each calendar day
// of SetQuotaDay's zone.
var DailyLimits = map[string]int64{BucketDefault: 10000, BucketSearch: 100, BucketStats: 10000}

// The fake charges and serves the operations of ingest.Operations, as the
// upstream does: each call of one is charged its Cost, failed calls
// included, and answered at its Path by its entry in handlers
// (handlers.go).
const basePath = "/youtube/v3/"

// operationAt returns the operation the upstream serves at path.
func operationAt(path string) (ingest.Operation, bool) {
	rest, ok := strings.CutPrefix(strings.TrimSuffix(path, "/"), basePath)
	for _, op := range ingest.Operations {
		if ok && op.Path == rest {
			return op, true
		}
	}
	return ingest.Operation{}, false
}

// unitsIn is what one call of op costs in bucket.
func unitsIn(op string, bucket string) int64 {
	o, _ := ingest.OperationNamed(op)
	for _, ch := range o.Cost {
		if ch.Pool == bucket {
			return ch.Units
		}
	}
	return 0
}

// Fake is the fake upstream. The zero value is not usable; call New.
type Fake struct {
	fx       *fixtures
	latency  atomic.Int64
	requests atomic.Int64
	keyless  atomic.Int64
	// discovered counts the discovery document's requests (in keyless too).
	discovered atomic.Int64
	epoch      atomic.Uint32

	mu        sync.Mutex
	keys      map[string]bool // nil: any non-empty key is valid
	keyFault  KeyFault
	quota     QuotaShape
	caps      map[string]int64 // bucket -> units; absent: no cap
	day       quotaDay         // SetQuotaDay: the caps count a calendar day (day.go)
	failNext  int
	failCode  int
	malformed int
	noChart   map[string]bool
	calls     map[string]map[string]int64 // key -> op -> calls charged
	motion    motion                      // motion.go; zero: still charts
	born      map[string]*video           // fresh videos served, by id
	removed   map[string]bool             // deleted or made private (removed.go)
	clock     func() time.Time            // SetClock; nil: the host's
	shape     chartShape                  // SetChartShape; zero: whole charts, full pages
	listed    []regions.Region            // ListRegion: regions named beside the catalogue
	swapped   map[string][2]int           // Swap: two ranks traded in a region's chart
	// swapAfter is SwapBetweenPages: two ranks traded in a region's chart
	// once its first page has been served.
	swapAfter map[string][2]int
	titles    map[string]string          // Retitle: new titles, by video id
	left      map[string]map[string]bool // Leave: videos out of a region's chart, by region
}

// chartShape cuts the charts the fake serves: at most videos items a
// chart, at most perPage a page; 0 leaves either as it is.
type chartShape struct{ videos, perPage int }

// SetChartShape serves each chart (a category's too) as at most its first
// videos items, in pages of at most perPage whatever maxResults asks, as
// the upstream's short pages do; 0 leaves either as it is. Tests that run
// days of passes use small charts, so that a pass costs its pages and
// little else.
func (f *Fake) SetChartShape(videos, perPage int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.shape = chartShape{videos: videos, perPage: perPage}
}

func (f *Fake) chartShape() chartShape {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.shape
}

// SetClock sets the upstream's own clock, which the Date header of every
// answer reads (RFC 7231, whole seconds), as Google's front end sets it;
// nil is the host's clock. The charts' motion has a clock of its own
// (Move).
func (f *Fake) SetClock(clock func() time.Time) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.clock = clock
}

func (f *Fake) date() string {
	f.mu.Lock()
	clock := f.clock
	f.mu.Unlock()
	if clock == nil {
		clock = time.Now
	}
	return clock().UTC().Format(http.TimeFormat)
}

var (
	fixturesOnce sync.Once
	shared       *fixtures
)

// New returns a fake that accepts any non-empty key, with no faults.
func New() *Fake {
	fixturesOnce.Do(func() { shared = buildFixtures() })
	f := &Fake{fx: shared, noChart: map[string]bool{}, caps: map[string]int64{},
		calls: map[string]map[string]int64{}, born: map[string]*video{}}
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
// QuotaOK. SearchPerDay fails search.list only, StatsPerDay
// videos.batchGetStats only; the 403 shapes fail every method.
func (f *Fake) ExhaustQuota(shape QuotaShape) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.quota = shape
}

// SetDailyQuota caps the default bucket: SetBucketQuota(BucketDefault, units).
func (f *Fake) SetDailyQuota(units int64) { f.SetBucketQuota(BucketDefault, units) }

// SetBucketQuota makes a key's calls that draw from bucket fail, as the
// upstream does when that bucket is spent, once the key has been charged
// units or more in it: 403 quotaExceeded for BucketDefault, a 429 "per day"
// for BucketSearch and BucketStats. Calls of the other buckets go on. The
// cap holds for the fake's lifetime, or for each calendar day of the zone
// SetQuotaDay names (day.go); 0 removes it.
func (f *Fake) SetBucketQuota(bucket string, units int64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if units <= 0 {
		delete(f.caps, bucket)
		return
	}
	f.caps[bucket] = units
}

// NoChart makes the regions' charts answer videoChartNotFound.
func (f *Fake) NoChart(regions ...string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, r := range regions {
		f.noChart[strings.ToUpper(r)] = true
	}
}

// ListRegion makes i18nRegions.list name one more region beside the
// catalogue, as the upstream does when it starts charting a country; the
// region has no chart here.
func (f *Fake) ListRegion(code, name string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.listed = append(f.listed, regions.Region{Code: strings.ToUpper(code), Name: name})
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
	f.keyFault, f.quota, f.caps = KeyOK, QuotaOK, map[string]int64{}
	f.failNext, f.malformed = 0, 0
	f.noChart = map[string]bool{}
}

// Charged returns the units charged to key in every bucket, failed calls
// included.
func (f *Fake) Charged(key string) int64 {
	var n int64
	for _, u := range f.ChargedByOp(key) {
		n += u
	}
	return n
}

// ChargedPools returns the units charged in every bucket, all keys
// together, failed calls included, requests without a key not: what cmd/fakeyt's /_charged serves,
// which names no key.
func (f *Fake) ChargedPools() map[string]int64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := map[string]int64{}
	for key := range f.calls {
		if key == "" {
			continue // refused, and charged to no project
		}
		for pool, n := range f.buckets(key) {
			out[pool] += n
		}
	}
	return out
}

// ChargedByOp returns the units charged to key per operation
// (ingest.OpVideosList and the rest), all buckets together.
func (f *Fake) ChargedByOp(key string) map[string]int64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := map[string]int64{}
	for op, n := range f.calls[key] {
		o, _ := ingest.OperationNamed(op)
		for _, ch := range o.Cost {
			out[op] += n * ch.Units
		}
	}
	return out
}

// ChargedBuckets returns the units charged to key per bucket (BucketDefault,
// BucketSearch, BucketStats: the pool names of costs.yaml), failed calls
// included. A bucket never charged is absent.
func (f *Fake) ChargedBuckets(key string) map[string]int64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.buckets(key)
}

func (f *Fake) buckets(key string) map[string]int64 {
	out := map[string]int64{}
	for op, n := range f.calls[key] {
		o, _ := ingest.OperationNamed(op)
		for _, ch := range o.Cost {
			out[ch.Pool] += n * ch.Units
		}
	}
	return out
}

// Requests returns how many requests with a key the fake has received, on
// any path: those the upstream may charge. Requests without one (which
// the worker sends to read the upstream's clock) are Keyless.
func (f *Fake) Requests() int64 { return f.requests.Load() }

// Keyless returns how many requests without a key the fake has received:
// refused, and charged to no project.
func (f *Fake) Keyless() int64 { return f.keyless.Load() }

// ChartLength returns how many videos region's chart holds (0: no chart).
func (f *Fake) ChartLength(region string) int {
	c, _ := f.fx.chartOf(region)
	return len(c)
}

// ServeHTTP answers one request of the YouTube Data API v3.
func (f *Fake) ServeHTTP(w http.ResponseWriter, r *http.Request) { f.ServeAnswer(w, r) }

// ServeAnswer answers r as ServeHTTP does and returns the answer's JSON as
// it was before it was encoded for the wire (wire.go): what its client
// reads once it has decoded it, so that a rig counts both without
// decoding it again. It is nil when nothing was sent (the client gave up
// during the latency). cut says the answer is one MalformNext cut short,
// so that a rig tells it without parsing the JSON again.
func (f *Fake) ServeAnswer(w http.ResponseWriter, r *http.Request) (plain []byte, cut bool) {
	a := f.ServeCall(w, r)
	return a.JSON, a.Cut
}

// Sent is an answer as ServeCall sent it: its JSON and whether it was cut
// short, as ServeAnswer returns them, and the videos a videos.list answer
// of status 200 names, in its order: nil for any other answer, one cut
// short, or one whose fields= leaves the items' ids out. A rig that keeps
// a chart page's ids reads them here rather than parsing the JSON again.
type Sent struct {
	JSON []byte
	Cut  bool
	IDs  []string
}

// ServeCall answers r as ServeHTTP does and returns what it sent.
func (f *Fake) ServeCall(w http.ResponseWriter, r *http.Request) Sent {
	start := time.Now()
	if r.URL.Path == DiscoveryPath {
		return Sent{JSON: f.discovery(w, r, start)}
	}
	if r.URL.Query().Get("key") == "" {
		f.keyless.Add(1)
	} else {
		f.requests.Add(1)
	}
	a := f.respond(r)
	// The latency runs from the request's arrival, so that the fake's own
	// work is inside it, as the upstream's is.
	if !f.wait(r.Context(), start) {
		return Sent{}
	}
	f.send(w, r, a.status, a.body)
	return Sent{JSON: a.body, Cut: a.cut, IDs: a.ids}
}

// answer is what respond built: its status, its JSON, whether that JSON
// was cut short on purpose (MalformNext), and the videos it names (Sent).
type answer struct {
	status int
	body   []byte
	cut    bool
	ids    []string
}

// respond charges the call and builds its answer: an injected fault, an
// error of the request, or the page.
func (f *Fake) respond(r *http.Request) answer {
	o, ok := operationAt(r.URL.Path)
	if !ok || handlers[o.Name] == nil || (r.Method != http.MethodGet && r.Method != http.MethodHead) {
		return encode(http.StatusNotFound, errNotFound(r.URL.Path))
	}
	op, q := o.Name, r.URL.Query()
	key := q.Get("key")
	spent := f.charge(key, op)
	if e := f.fault(key, op, spent); e != nil {
		return encode(e.Error.Code, e)
	}
	sel, e := checkFields(op, q.Get("fields"))
	if e != nil {
		return encode(e.Error.Code, e)
	}
	body, e := handlers[op](f, q)
	if e != nil {
		return encode(e.Error.Code, e)
	}
	a := f.encodeBody(body, sel)
	if l, ok := body.(*listResponse); ok && a.status == http.StatusOK && !a.cut && sel.keepsWhole("items", "id") {
		a.ids = videoIDs(l.Items)
	}
	return a
}

// videoIDs are the ids of the videos among items, in their order.
func videoIDs(items []any) []string {
	var out []string
	for _, it := range items {
		if v, ok := it.(videoItem); ok {
			if out == nil {
				out = make([]string, 0, len(items))
			}
			out = append(out, v.ID)
		}
	}
	return out
}

// charge records the call and says in which of the buckets it draws from
// the key had already spent the cap (the first such, "" for none).
func (f *Fake) charge(key, op string) (spent string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	before := f.today(key, f.buckets(key))
	if f.calls[key] == nil {
		f.calls[key] = map[string]int64{}
	}
	f.calls[key][op]++
	o, _ := ingest.OperationNamed(op)
	for _, ch := range o.Cost {
		if limit, capped := f.caps[ch.Pool]; capped && before[ch.Pool] >= limit {
			return ch.Pool
		}
	}
	return ""
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
func (f *Fake) fault(key, op, spent string) *apiError {
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
	case f.quota == SearchPerDay && unitsIn(op, BucketSearch) > 0:
		return errQuota(SearchPerDay)
	case f.quota == StatsPerDay && unitsIn(op, BucketStats) > 0:
		return errQuota(StatsPerDay)
	case f.quota == QuotaExceeded || f.quota == DailyLimitExceeded:
		return errQuota(f.quota)
	case spent != "":
		return errQuota(spentShape[spent])
	}
	return nil
}

// spentShape is how the upstream answers a call whose bucket is spent.
var spentShape = map[string]QuotaShape{
	BucketDefault: QuotaExceeded, BucketSearch: SearchPerDay, BucketStats: StatsPerDay,
}

func (f *Fake) chartMissing(region string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.noChart[region]
}

// encodeBody encodes a successful answer, cut to sel (partial.go; nil:
// whole), truncated when MalformNext asks.
func (f *Fake) encodeBody(v any, sel selection) answer {
	var b []byte
	var err error
	if sel == nil {
		b, err = marshal(v)
	} else {
		// The whole answer is only read, to be cut: it is encoded into a
		// buffer the next answer reuses, and the cut is the answer.
		whole := wholeBufs.Get().(*[]byte)
		defer wholeBufs.Put(whole)
		if *whole, err = appendJSON((*whole)[:0], v); err == nil {
			b, err = prune(*whole, sel)
		}
	}
	if err != nil {
		return encode(http.StatusInternalServerError, errBackend(http.StatusInternalServerError))
	}
	a := answer{status: http.StatusOK, body: b}
	f.mu.Lock()
	if f.malformed > 0 {
		f.malformed--
		a.body, a.cut = b[:len(b)/2], true
	}
	f.mu.Unlock()
	return a
}

// wholeBufs hold a whole answer while it is cut to its fields.
var wholeBufs = sync.Pool{New: func() any { return new([]byte) }}

// appendJSON appends v's JSON to b as encoding/json's Marshal writes it
// (HTML escaped, maps' keys sorted), with segmentio's encoder: the fake
// encodes every answer whole before its cut, and its work is inside every
// measured day's.
func appendJSON(b []byte, v any) ([]byte, error) {
	return fastjson.Append(b, v, fastjson.EscapeHTML|fastjson.SortMapKeys)
}

// marshal is v's JSON in a slice of its own.
func marshal(v any) ([]byte, error) { return appendJSON(nil, v) }

func encode(status int, v any) answer {
	b, _ := json.Marshal(v)
	return answer{status: status, body: b}
}

// DiscoveryPath is the API's discovery document, which the upstream serves
// to anyone and meters against no project's quota: where ingest reads the
// upstream's clock for free.
const DiscoveryPath = "/discovery/v1/apis/youtube/v3/rest"

// discovery answers the API's discovery document, the real one
// (discoveryDocument), with the Date of the fake's clock, and charges
// nothing.
func (f *Fake) discovery(w http.ResponseWriter, r *http.Request, start time.Time) []byte {
	f.keyless.Add(1)
	f.discovered.Add(1)
	if !f.wait(r.Context(), start) {
		return nil
	}
	doc := discoveryDocument()
	f.send(w, r, http.StatusOK, doc)
	return doc
}

// Discovered counts the requests for the discovery document.
func (f *Fake) Discovered() int64 { return f.discovered.Load() }

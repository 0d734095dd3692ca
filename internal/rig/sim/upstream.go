package sim

import (
	"context"
	"errors"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"time"

	fastjson "github.com/segmentio/encoding/json"

	"github.com/ingestworks/ingest"
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
	// start is the world's first day; gone, the videos the upstream
	// forgot (deleted, made private), one a day from it (world)
	start time.Time
	gone  []Gone
	// asks are when the upstream's time was asked at no quota cost (the
	// discovery document, without the key)
	asks []time.Time
	// fronted is how many of the fake's next failed answers pass through
	// a proxy in front (proxy.go), and proxied how many it answered so far
	fronted, proxied int
	// cutOff is when the upstream can be reached again, and refused the
	// keyed requests refused at dial meanwhile (unreached.go)
	cutOff  time.Time
	refused []Call
}

// Gone is a video the upstream forgot, and when: its owner deleted it or
// made it private.
type Gone struct {
	At time.Time
	ID string
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
// status, the bytes of its answer's body on the wire (gzipped when the
// client asked for it) and of its JSON, and the fake's count of each
// bucket's charge once it answered; what it asked for: a chart's page
// (its region, category and page token, and the videos it named in IDs,
// in the upstream's order), a region's category names
// (Region), videos by id (IDs), or a search's page (its region, its
// words and window in Category, its page token, the videos it named in
// IDs).
type Call struct {
	At     time.Time
	Sent   time.Time // when the request reached the fake, At less its answer's time
	Worker string    // whose request it was: WorkerDaemon, WorkerOnce or WorkerBackfill
	// Deadline says its client's deadline ended the request before the
	// fake answered it: given up at its bound, the answer never read
	Deadline               bool
	Path                   string
	Status                 int
	Bytes                  int // on the wire
	JSON                   int // the body decoded: what the client reads
	Charged                map[string]int64
	Kind                   string // one of the kinds below
	Cut                    bool   // answered 200 with its body cut short (MalformNext)
	Region, Category, Page string
	IDs                    []string
	// First is a tracking call's first id: a pass asks the same ids in
	// the same batches, so a batch asked twice in a slot is a pass run twice
	First string
	N     int // the ids a tracking call asked
	// Proxy says a proxy in front answered for the upstream with Status
	// and a page of its own, no error body of the API's (proxy.go)
	Proxy bool
	// Refused says it was refused at dial and never reached the upstream
	// (History.Unreached: unreached.go)
	Refused bool
}

// The workers whose requests the fake tells apart: the daemon, in every
// life; a `run --once` beside it (a second process, a peer); a backfill.
const (
	WorkerDaemon   = "daemon"
	WorkerOnce     = "once"
	WorkerBackfill = "backfill"
)

// onceWorker marks a request's context as a `run --once` beside the
// daemon's, as backfilling marks a backfill's.
type onceWorker struct{}

// workerOf is whose request ctx carries.
func workerOf(ctx context.Context) string {
	switch {
	case ctx.Value(backfilling{}) != nil:
		return WorkerBackfill
	case ctx.Value(onceWorker{}) != nil:
		return WorkerOnce
	}
	return WorkerDaemon
}

// The kinds of call the checker tells apart.
const (
	KindChart      = "chart"      // videos.list chart=mostPopular
	KindCategories = "categories" // videoCategories.list
	KindByID       = "by-id"      // videos.list id=: the refresh
	KindStats      = "stats"      // videos:batchGetStats: tracking
	KindSearch     = "search"     // search.list: a backfill's page
	KindDetails    = "details"    // videos.list id= for a backfill: its page's videos
	KindOther      = "other"
)

// NewUpstream is a fresh fake upstream that answers in process, its
// quota the pools' limits, each counted by the upstream's own calendar
// day (ingest.UpstreamZone: 23 and 25 hours on the days its clocks
// change), and refused as the upstream refuses it once spent, until its
// midnight. It forgets a charting video a day (forget).
func NewUpstream(seed uint64, c *ingest.Costs) *Upstream {
	u := &Upstream{Fake: fakeyt.New(), jitter: rand.New(rand.NewPCG(seed, 0x717e4)), start: time.Now()}
	for _, p := range c.Pools {
		u.Fake.SetBucketQuota(p.Name, p.Limit)
	}
	u.Fake.SetQuotaDay(ingest.UpstreamZone)
	return u
}

// Move has the upstream's charts move as the real ones do from now
// (fakeyt's Move, from the seed): fresh videos climb in and leave for
// good, so that stored videos stop charting and come due for the refresh.
func (u *Upstream) Move(seed uint64) { u.Fake.Move(seed, time.Now) }

// kind is what a keyed request asks for.
func kind(path string, q url.Values) string {
	switch {
	case strings.HasSuffix(path, "/videoCategories"):
		return KindCategories
	case strings.HasSuffix(path, "/videos") && q.Get("chart") == "mostPopular":
		return KindChart
	case strings.HasSuffix(path, "/videos") && q.Get("id") != "":
		return KindByID
	case strings.HasSuffix(path, "/videos:batchGetStats"):
		return KindStats
	case strings.HasSuffix(path, "/search"):
		return KindSearch
	}
	return KindOther
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
	if err := u.unreached(req); err != nil {
		return nil, err
	}
	asked := time.Now()
	rec := httptest.NewRecorder()
	sent := u.Fake.ServeCall(rec, req)
	q := req.URL.Query()
	plain := sent.JSON
	proxy := false
	if q.Get("key") != "" {
		if rec, proxy = u.front(rec); proxy {
			plain = rec.Body.Bytes()
		}
	}
	var h *hold
	if q.Get("key") == "" && strings.HasSuffix(req.URL.Path, "/discovery/v1/apis/youtube/v3/rest") {
		u.mu.Lock()
		u.asks = append(u.asks, time.Now())
		u.mu.Unlock()
	}
	if q.Get("key") != "" {
		c := askedFor(req, q)
		c.At, c.Sent, c.Status, c.Bytes, c.JSON = time.Now(), asked, rec.Code, rec.Body.Len(), len(plain)
		c.Cut, c.Proxy = rec.Code == http.StatusOK && sent.Cut, proxy
		c.Deadline = plain == nil && errors.Is(req.Context().Err(), context.DeadlineExceeded)
		switch c.Kind {
		case KindChart:
			c.IDs = sent.IDs
		case KindSearch:
			c.IDs = searchIDs(plain)
		}
		u.mu.Lock()
		// the count read in the lock, so that the calls' counts rise in
		// the order the calls are kept
		c.Charged = u.Fake.ChargedPools()
		u.calls = append(u.calls, c)
		if u.hold != nil && rec.Code == http.StatusOK && c.Kind == KindChart {
			h, u.hold = u.hold, nil
		}
		forget := rec.Code == http.StatusOK && c.Kind == KindChart && c.Page == "" && c.At.Sub(u.start) >= time.Duration(len(u.gone))*24*time.Hour
		u.mu.Unlock()
		if forget {
			u.forget(c.At, first(sent.IDs))
		}
	}
	if h != nil {
		h.held <- Held{At: time.Now(), Region: q.Get("regionCode"), Category: q.Get("videoCategoryId"), First: first(sent.IDs)}
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

// askedFor is what a keyed request asks for, as its Call names it: whose
// it is, its kind, and the chart, page, ids or search it asks.
func askedFor(req *http.Request, q url.Values) Call {
	c := Call{Worker: workerOf(req.Context()), Path: req.URL.Path, Kind: kind(req.URL.Path, q)}
	switch c.Kind {
	case KindChart:
		c.Region, c.Category, c.Page = q.Get("regionCode"), q.Get("videoCategoryId"), q.Get("pageToken")
	case KindCategories:
		c.Region = q.Get("regionCode")
	case KindByID:
		c.IDs = strings.Split(q.Get("id"), ",")
		if req.Context().Value(backfilling{}) != nil {
			c.Kind = KindDetails
		}
	case KindSearch:
		c.Region, c.Page = q.Get("regionCode"), q.Get("pageToken")
		c.Category = strings.Join([]string{q.Get("q"), q.Get("publishedAfter"), q.Get("publishedBefore")}, " ")
	case KindStats:
		c.First, _, _ = strings.Cut(q.Get("id"), ",")
		for _, v := range q["id"] { // one id a value, or several a value
			c.N += strings.Count(v, ",") + 1
		}
	}
	return c
}

// forget has the upstream forget id from now, the first video of the
// day's first chart page: its owner deletes it, or (every other day)
// makes it private, which to an API key is the same. The refresh finds it
// gone once its text is due again, and deletes it (docs/explanation/terms.md).
func (u *Upstream) forget(at time.Time, id string) {
	if id == "" {
		return
	}
	u.mu.Lock()
	n := len(u.gone)
	u.gone = append(u.gone, Gone{at, id})
	u.mu.Unlock()
	if n%2 == 0 {
		u.Fake.Delete(id)
	} else {
		u.Fake.MakePrivate(id)
	}
}

// Forgotten is every video the upstream forgot, in order.
func (u *Upstream) Forgotten() []Gone {
	u.mu.Lock()
	defer u.mu.Unlock()
	return append([]Gone(nil), u.gone...)
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

// first is the first of a chart page's ids, "" for none.
func first(ids []string) string {
	if len(ids) == 0 {
		return ""
	}
	return ids[0]
}

// searchIDs are the videos a search page names.
func searchIDs(body []byte) []string {
	var page struct {
		Items []struct {
			ID struct {
				VideoID string `json:"videoId"`
			} `json:"id"`
		} `json:"items"`
	}
	if fastjson.Unmarshal(body, &page) != nil {
		return nil
	}
	var out []string
	for _, it := range page.Items {
		out = append(out, it.ID.VideoID)
	}
	return out
}

// Calls is every keyed request answered so far, in order.
func (u *Upstream) Calls() []Call {
	u.mu.Lock()
	defer u.mu.Unlock()
	return append([]Call(nil), u.calls...)
}

// Asks is every time the upstream's time was asked at no quota cost, in
// order.
func (u *Upstream) Asks() []time.Time {
	u.mu.Lock()
	defer u.mu.Unlock()
	return append([]time.Time(nil), u.asks...)
}

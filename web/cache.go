package web

import (
	"bytes"
	"context"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ingestworks/ingest/clock"
	"github.com/ingestworks/ingest/web/edge"
	"github.com/ingestworks/ingest/web/kept"
	"github.com/ingestworks/ingest/web/signin"
	"github.com/ingestworks/ingest/web/transport"
)

// The readers' answers (the front page, charts, videos, search, and their
// JSON) change only when the store's data does: no page shows a time
// relative to now (each time is absolute, in <time datetime>), so a copy
// stays true however long it is kept. So each is built once per change
// of the store's mark (store.DataMark), kept with its ETag and its gzip
// form, and served from memory; a conditional request is answered from
// what is kept, without building anything.
//
// Without caches in front, a landed run replaces the pages it changes
// before readers are answered from them: a watcher beside the requests
// reads the mark every markEvery and, when it moved, builds again each
// kept page readers asked for since its last build, one at a time (a
// reader who asks between two landings finds the page built); a reader who finds the mark
// moved before the watcher did, or a page it has not reached yet, waits
// for that page's one build, up to freshWait, rather than be answered
// from the copy before. Only past freshWait (the store slow), or when the
// build failed (tried again after rebuildEvery), is the copy before
// served: never a 503 for a page kept (docs/reference/api/dashboard.md).
// With caches in front (Config.Purge), their copies answer the readers:
// no watcher builds ahead, a page is built when a cache asks for it after
// the landing's purge, and a kept page the landing did not change (by the
// purge's keys) is kept under the new mark as it is (purge.go).
//
// Only a 200 is kept, under a bound in bytes and in answers (package kept): a
// URL that answers 404, 410 or 400 leaves nothing behind, and URLs asked
// for once push out one another, never the pages readers keep asking for.

// markEvery is how often the store's mark is read: a run that lands is
// seen within it, by the watcher or by a request.
const markEvery = time.Second

// freshWait is how long a reader waits for its page's new copy, the mark
// having moved, before it is answered from the copy before.
const freshWait = 500 * time.Millisecond

// rebuildEvery is how long a page whose build failed (out of time, the
// store busy) is served from its copy before a build is tried again.
const rebuildEvery = 5 * time.Second

// idleMarks is how many reads of the mark with no reader between them
// stop the watcher: a site no one reads builds nothing, and its next
// reader starts it again (and waits for its page's one build).
const idleMarks = 60

// answers are the kept answers by request URI (package kept bounds them),
// and the builds under way, so that many requests for an answer wait for
// one build.
type answers struct {
	set *kept.Set[*answer]

	mu       sync.Mutex
	building map[string]*flight

	markMu      sync.Mutex
	mark        string
	changed     time.Time // when the data under mark last changed: the answers' Last-Modified
	markAt      time.Time
	markReading bool // a request reads the mark now: the others take the one known

	builds   atomic.Int64 // how many answers were built: tests and the metrics read it
	marks    atomic.Int64 // how many times the watcher read the store's mark: the tests read it
	rebuilds atomic.Int64 // of them, built again for a page kept
	waited   atomic.Int64 // requests that waited for a page's first build

	watching atomic.Bool // the watcher runs
	closing  sync.Once
	closed   chan struct{} // closed by Close: no watcher runs after it
	asked    atomic.Bool   // a reader was answered since the watcher last looked
	seen     atomic.Int64  // the house's time the last reader read (Unix ns): the watcher's now

	// wait is freshWait, shorter in tests.
	wait time.Duration
	// slow, when set, runs before each build's handler with its request,
	// under its deadline: the tests make a build slow with it.
	slow func(r *http.Request)
	// rebuilt, when set, is called when a build again of a kept page is
	// over, with the URI's key: the tests await it.
	rebuilt func(key string)
	// noWatcher, when set, starts no watcher: the benchmarks run its work
	// themselves, or leave it out.
	noWatcher bool
}

// flight is one build under way: done closes when it is over, a then
// being the answer kept, nil when it was not one to keep (b is then what
// was built, for those who waited for a first build). A build again that
// keeps nothing either left the copy (failed) or dropped it (the page is
// gone or wrong now).
type flight struct {
	done    chan struct{}
	a       *answer
	b       *transport.Answer
	dropped bool
}

// join is the build of key under way, and whether the caller is to run it
// (none was).
func (a *answers) join(key string) (*flight, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if f, ok := a.building[key]; ok {
		return f, false
	}
	if a.building == nil {
		a.building = map[string]*flight{}
	}
	f := &flight{done: make(chan struct{})}
	a.building[key] = f
	return f, true
}

// land ends the build of key with its answer (nil: none kept, b what
// was built instead).
func (a *answers) land(key string, f *flight, ans *answer, b *transport.Answer) {
	f.a, f.b = ans, b
	a.mu.Lock()
	delete(a.building, key)
	a.mu.Unlock()
	close(f.done)
}

// answer is a built 200: its header, its bytes plain and compressed, what
// it was built under, and what from, to be built again beside the
// requests.
type answer struct {
	mark     string
	header   http.Header
	body, gz []byte
	etag     string
	modified time.Time // when its content last changed: the handler's, else its mark's
	built    time.Time // when the build of this copy, or the last try at a new one, began
	failed   bool      // the last try at a new copy failed: the next waits rebuildEvery

	req *http.Request // what it was built from, outliving its request
	h   http.Handler
	// shared says its route's answers may be a cache's, whose keys (its
	// Surrogate-Key, what it shows) a landing's purge is made of: a move
	// of the mark that names none of them leaves it true (keepUnchanged).
	shared bool
	keys   []string
	// asked says it was served since it was built: the watcher builds
	// again only what readers read.
	asked atomic.Bool
}

// currentMark is the store's data mark and when its data changed, read at
// most once per markEvery by one request while the others take the mark
// known (a busy store holds up no reader that has a copy to be served);
// "" when it cannot be read (nothing is then kept).
func (s *Server) currentMark(ctx context.Context, now time.Time) (string, time.Time) {
	a := &s.answers
	a.markMu.Lock()
	if a.mark != "" && (a.markReading || now.Sub(a.markAt) < markEvery && !now.Before(a.markAt)) {
		defer a.markMu.Unlock()
		return a.mark, a.changed
	}
	a.markReading = true
	a.markMu.Unlock()
	return s.readMark(ctx, now)
}

// readMark reads the store's mark and makes it the one known, at now.
func (s *Server) readMark(ctx context.Context, now time.Time) (string, time.Time) {
	a := &s.answers
	m, changed, err := s.cfg.DB.DataMark(ctx)
	a.markMu.Lock()
	defer a.markMu.Unlock()
	a.markReading = false
	if err != nil {
		s.cfg.Logger.Debug("web: read the data mark: answers are built per request", "err", err)
		return "", time.Time{}
	}
	a.mark, a.changed, a.markAt = m, changed, now
	return m, changed
}

// keptHandler serves a reader's route from the kept answers; it sends its
// own answers (Server.routes does not put it through transport).
type keptHandler struct {
	s     *Server
	build http.Handler
	// shared says its answers may be a shared cache's (Route.shared).
	shared bool
	// variant, when set, says which of the URI's answers r gets (its key
	// among them, found without reading the store), with the request to
	// build it from; keep false: r's answer is not kept.
	variant func(r *http.Request, mark string) (built *http.Request, key string, keep bool)
}

// kept is a reader's answer built once per change of what it shows and
// served from memory.
func (s *Server) kept(h http.HandlerFunc) http.Handler {
	return &keptHandler{s: s, build: s.deadline(s.slowed(h))}
}

// keptVariants is kept for a page whose answer also depends on the
// request's headers: one kept answer per key variant finds (the handler
// says Vary).
func (s *Server) keptVariants(h http.HandlerFunc, variant func(*http.Request, string) (*http.Request, string, bool)) http.Handler {
	return &keptHandler{s: s, build: s.deadline(s.slowed(h)), variant: variant}
}

// slowed is h after the tests' hook, when one is set (answers.slow).
func (s *Server) slowed(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if s.answers.slow != nil {
			s.answers.slow(r)
		}
		h(w, r)
	}
}

func (k *keptHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s := k.s
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		s.transport(w, r, k.build, k.shared)
		return
	}
	now := s.cfg.Clock.Now()
	var mark string
	var changed time.Time
	if s.cfg.DB != nil {
		mark, changed = s.currentMark(r.Context(), now)
	}
	if mark == "" {
		s.transport(w, r, k.build, k.shared)
		return
	}
	if s.operatorHeader(r) { // drawn for this operator alone (personal.go)
		if k.variant != nil {
			r, _, _ = k.variant(r, mark)
		}
		s.transport(w, r, k.build, k.shared)
		return
	}
	uri := r.URL.RequestURI()
	if k.variant != nil {
		built, key, keep := k.variant(r, mark)
		if !keep {
			s.transport(w, built, k.build, k.shared)
			return
		}
		r, uri = built, uri+"\x00"+key
	}
	s.watch(now)
	a := s.answers.set.Get(uri)
	if a != nil && !a.fresh(mark) {
		a = s.fresher(r, k.build, uri, a, mark, changed, now)
	}
	if a == nil {
		if a = s.build(w, r, k, uri, mark, changed); a == nil {
			return
		}
	}
	a.asked.Store(true)
	s.serveAnswer(w, r, a, k.shared, !a.fresh(mark))
}

// fresher is uri's copy built under mark, for which the reader waits up
// to freshWait; the copy before when it does not come by then or its
// build failed; nil when the page is gone or wrong now, to be built in
// the request.
func (s *Server) fresher(r *http.Request, h http.Handler, uri string, before *answer, mark string, changed, now time.Time) *answer {
	f := s.rebuild(r, h, uri, before, mark, changed, now)
	if f == nil {
		return before
	}
	wait := s.answers.wait
	if wait <= 0 {
		wait = freshWait
	}
	t := clock.NewTimer(wait)
	defer t.Stop()
	select {
	case <-f.done:
	case <-t.C:
		return before
	}
	switch {
	case f.a != nil:
		return f.a
	case f.dropped:
		return nil
	}
	return before
}

// build makes the first answer of uri, none being kept, or waits for the
// build under way: the answer to serve, or nil when it was not one to
// keep and has been sent. The build runs under the request's deadline,
// so a wait here is bounded by it too; an anonymous reader's, within the
// site's budget (budget.go).
func (s *Server) build(w http.ResponseWriter, r *http.Request, k *keptHandler, uri string, mark string, changed time.Time) *answer {
	h := k.build
	f, lead := s.answers.join(uri)
	if !lead {
		s.answers.waited.Add(1)
		<-f.done
		if f.a != nil {
			return f.a
		}
		if f.b == nil { // a build again that kept nothing: this request builds
			return s.build(w, r, k, uri, mark, changed)
		}
		s.send(w, r, f.b.Clone(), k.shared)
		return nil
	}
	if a := s.answers.set.Get(uri); a != nil && a.fresh(mark) { // kept while this request looked
		s.answers.land(uri, f, a, nil)
		return a
	}
	s.answers.waited.Add(1)
	if !s.private(r) {
		release, ok := s.budget.Take(r.Context(), budgetWait)
		if !ok {
			b := s.busy(r)
			s.answers.land(uri, f, nil, b.Clone())
			s.send(w, r, b, k.shared)
			return nil
		}
		defer release()
	}
	started := s.cfg.Clock.Now()
	b := s.buildAnswer(r, h)
	if !b.Keepable() {
		s.answers.land(uri, f, nil, b.Clone())
		s.send(w, r, b, k.shared)
		return nil
	}
	a := newAnswer(b, mark, changed, nil)
	b.Release()
	a.built, a.req, a.h, a.shared = started, detached(r), h, k.shared
	s.answers.set.Put(uri, a)
	s.answers.land(uri, f, a, nil)
	return a
}

// detached is r to be built from again after it is over, kept with its
// answer: without the token or the session it may carry, which no kept
// answer is built from and no copy of a request should hold.
func detached(r *http.Request) *http.Request {
	c := r.Clone(context.WithoutCancel(r.Context()))
	c.Header.Del("Authorization")
	cookies := c.Cookies()
	c.Header.Del("Cookie")
	for _, k := range cookies {
		if k.Name != signin.CookieName {
			c.AddCookie(k)
		}
	}
	return c
}

// rebuild starts the build of uri's copy under mark beside the requests,
// or joins the one under way: its flight, nil when none is to run (the
// last try failed less than rebuildEvery ago). The build reads r's
// values, not its life: it goes on when r is over, under its own
// deadline.
func (s *Server) rebuild(r *http.Request, h http.Handler, uri string, before *answer, mark string, changed, now time.Time) *flight {
	if since := now.Sub(before.built); before.failed && since < rebuildEvery && since >= 0 {
		return nil
	}
	f, lead := s.answers.join(uri)
	if !lead {
		return f
	}
	r = detached(r)
	s.answers.rebuilds.Add(1)
	go func() {
		b := s.buildBeside(r, h)
		var a *answer
		switch {
		case b.Keepable():
			a = newAnswer(b, mark, changed, before)
			b.Release()
			a.built, a.req, a.h, a.shared = now, r, h, before.shared
			s.answers.set.Put(uri, a)
		case b.Status() >= http.StatusInternalServerError:
			// Not built this time (out of time, the store busy, a
			// failure): the copy before stays, tried again after
			// rebuildEvery.
			again := &answer{mark: before.mark, header: before.header, body: before.body, gz: before.gz, etag: before.etag,
				modified: before.modified, built: now, failed: true, req: before.req, h: before.h, shared: before.shared, keys: before.keys}
			s.answers.set.Put(uri, again)
		default:
			// The page is gone or wrong now (a video deleted, a region
			// no longer charted): its copy goes with it, and the
			// request builds what it is now.
			s.answers.set.Drop(uri)
			f.dropped = true
		}
		s.answers.land(uri, f, a, nil)
		if s.answers.rebuilt != nil {
			s.answers.rebuilt(uri)
		}
	}()
	return f
}

// watch starts the watcher unless it runs; now is the house's time.
// With caches in front (purged), no watcher builds ahead: a page is built
// when a cache asks for it after the purge, and kept until a landing
// changes it (keepUnchanged).
func (s *Server) watch(now time.Time) {
	s.answers.seen.Store(now.UnixNano())
	s.answers.asked.Store(true)
	if s.purged() || s.answers.noWatcher {
		return
	}
	if s.answers.watching.CompareAndSwap(false, true) {
		go s.watcher()
	}
}

// Close stops the watchers, at once and for good, the purge's once what
// they were telling a cache is given up: the server's store and purge may
// be closed after it. Requests are still answered, from their own builds.
func (s *Server) Close() {
	s.answers.closing.Do(func() {
		close(s.answers.closed)
	})
	if s.purging != nil {
		s.purging.Stop()
	}
}

// watcher reads the store's mark every markEvery and, when it moved,
// builds again the kept pages readers asked for since their build, one at
// a time, so that readers find them fresh; it stops after idleMarks reads
// with no reader between them.
func (s *Server) watcher() {
	tick := clock.NewTicker(markEvery)
	defer tick.Stop()
	idle := 0
	for {
		select {
		case <-s.answers.closed:
			s.answers.watching.Store(false)
			return
		case <-tick.C:
		}
		if s.answers.asked.Swap(false) {
			idle = 0
		} else if idle++; idle >= idleMarks {
			s.answers.watching.Store(false)
			if !s.answers.asked.Load() || !s.answers.watching.CompareAndSwap(false, true) {
				return
			}
			idle = 0
		}
		s.refreshKept()
	}
}

// refreshKept builds again, one at a time, each kept page asked for since
// its build whose mark is not the store's now. Its time is the one the
// last reader read: the house's clock is read by the requests alone. With
// no page asked for since its build there is nothing a new mark would
// have it build, and it reads none: a reader's request reads the mark
// itself when the one known is a second old, as it does without the
// watcher.
func (s *Server) refreshKept() {
	if !s.answers.set.AnyServed() {
		return
	}
	now := time.Unix(0, s.answers.seen.Load())
	s.answers.marks.Add(1)
	mark, changed, err := s.cfg.DB.DataMark(context.Background())
	if err != nil {
		return // the requests read it again, and say why it failed
	}
	s.answers.markMu.Lock()
	s.answers.mark, s.answers.changed = mark, changed // newer than any known: the requests take it until theirs is due
	s.answers.markMu.Unlock()
	for _, k := range s.answers.set.Stale(mark) {
		a := k.Answer
		if f := s.rebuild(a.req, a.h, k.Key, a, mark, changed, now); f != nil {
			<-f.done
		}
	}
}

// buildBeside is buildAnswer for a build beside the requests: a panic,
// which net/http would have recovered in a request, is recovered here
// too, logged and taken for a 500, so that it ends no process.
func (s *Server) buildBeside(r *http.Request, h http.Handler) (b *transport.Answer) {
	defer func() {
		if p := recover(); p != nil {
			s.cfg.Logger.Error("web: a page's build beside the requests panicked; its copy stays", "uri", r.URL.RequestURI(), "panic", p)
			b = transport.NewAnswer(http.Header{}, http.StatusInternalServerError)
		}
	}()
	return s.buildAnswer(r, h)
}

// Size, Mark and Served are what the kept answers read of an answer
// (kept.Answer).
func (a *answer) Size() int { return len(a.body) + len(a.gz) }

func (a *answer) Mark() string { return a.mark }

func (a *answer) Served() bool { return a.asked.Load() && a.req != nil }

// fresh reports whether a was built under mark.
func (a *answer) fresh(mark string) bool {
	return a != nil && a.mark == mark
}

// buildAnswer runs the handler into a buffer, counting the build.
func (s *Server) buildAnswer(r *http.Request, h http.Handler) *transport.Answer {
	s.answers.builds.Add(1)
	b := transport.NewReused(http.Header{}, http.StatusOK)
	h.ServeHTTP(b, forKept(r))
	return b
}

// setModified says t, when what an answer shows last changed, as its
// Last-Modified, in place of its mark's time (newAnswer): a feed's
// <updated>, the sitemap's latest lastmod. The epoch (no content yet)
// says nothing.
func setModified(h http.Header, t time.Time) {
	if t.After(time.Unix(0, 0)) {
		h.Set("Last-Modified", t.UTC().Format(http.TimeFormat))
	}
}

// newAnswer keeps b's bytes with their ETag and gzip form (the answer
// before's, when the bytes are the same). Its Last-Modified is the
// content's time when the handler said it (setModified), else when the
// data under its mark last changed: never when a server built it, so that
// every server on the database says the same of the same bytes.
func newAnswer(b *transport.Answer, mark string, changed time.Time, before *answer) *answer {
	body := bytes.Clone(b.Body())
	a := &answer{mark: mark, header: b.Header(), body: body,
		etag: transport.Tag(body), modified: modifiedOf(b.Header(), changed),
		keys: strings.Fields(b.Header().Get(edge.SurrogateKey))}
	if before != nil && before.etag == a.etag {
		a.gz = before.gz
	}
	if a.gz == nil && len(body) >= transport.CompressMin && transport.Compressible(b.Header().Get("Content-Type")) {
		a.gz = transport.Gzip(body)
	}
	return a
}

// modifiedOf is an answer's Last-Modified (newAnswer): the content's time
// the handler said in h, else changed, when the data under its mark last
// changed.
func modifiedOf(h http.Header, changed time.Time) time.Time {
	if content, err := http.ParseTime(h.Get("Last-Modified")); err == nil {
		return content
	}
	return changed.Truncate(time.Second)
}

// under is a as it would be built again under mark, changed at changed,
// where nothing it shows moved: the same bytes, the mark's Last-Modified
// as a build would say it.
func (a *answer) under(mark string, changed time.Time) *answer {
	return &answer{mark: mark, header: a.header, body: a.body, gz: a.gz, etag: a.etag, modified: modifiedOf(a.header, changed),
		built: a.built, failed: a.failed, req: a.req, h: a.h, shared: a.shared, keys: a.keys}
}

// serveAnswer sends a kept answer: http.ServeContent answers a conditional
// request (If-None-Match, If-Modified-Since) and ranges from it. A copy
// from before the mark (before), served while its new one is built, is a
// shared cache's for a moment only (edge.Policy.Interim): long enough that
// a page whose data moves faster than it is built is still answered by
// the cache, short enough that the new copy replaces it as soon as it is
// there.
func (s *Server) serveAnswer(w http.ResponseWriter, r *http.Request, a *answer, shared, before bool) {
	h := w.Header()
	for k, v := range a.header {
		h[k] = v
	}
	h.Set("ETag", a.etag)
	vary := "Accept-Encoding"
	if v := a.header.Get("Vary"); v != "" {
		vary = v + ", " + vary
	}
	h.Set("Vary", vary) // a fresh value: a.header's is kept, never added to
	s.cacheControl(h, r, shared, http.StatusOK)
	if before && strings.HasPrefix(h.Get("Cache-Control"), "public") {
		h.Set("Cache-Control", s.cache.Interim().String())
	}
	body := a.body
	if a.gz != nil && transport.AcceptsGzip(r) {
		body = a.gz
		h.Set("Content-Encoding", "gzip")
	}
	http.ServeContent(w, r, "", a.modified, bytes.NewReader(body))
}

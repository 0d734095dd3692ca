package web

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/clock"
	"github.com/ingestworks/ingest/internal/rig/storetest"
	"github.com/ingestworks/ingest/retention"
	"github.com/ingestworks/ingest/store"
	"github.com/ingestworks/ingest/web/edge"
)

// TestALandingPurgesWhatItChanged: when the data mark moves, the purge is
// told the keys of exactly what moved it, per kind of change: a run
// landed (its chart and feed, the pages listing every chart, its
// videos, search), a video tracked, refreshed or gone (its key, search),
// a prune (the whole site); and the answer a cache then asks for is the
// new one.
func TestALandingPurgesWhatItChanged(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	t0 := time.Date(2026, 11, 20, 9, 0, 0, 0, time.UTC)
	db := storetest.Open(t)
	regionRun(t, db, "US", "", t0.Add(-72*time.Hour), worldVideos(t0, "old")...)
	regionRun(t, db, "US", "", t0, worldVideos(t0, "local", "hit")...)
	regionRun(t, db, "JP", "", t0.Add(time.Minute), worldVideos(t0, "duo", "jp2")...)
	purged := make(chan []string, 16)
	pub, _ := url.Parse("https://charts.example.org/")
	var served atomic.Pointer[Server]
	ready := make(chan struct{}) // the server's watcher may purge before New returns
	s, err := New(Config{DB: db, Listen: ":8080", Public: true, Meter: anyMeter(), PublicURL: pub,
		Clock: clock.Func(func() time.Time { return t0.Add(time.Hour) }), Purge: purgeTo(func(keys []string) error {
			// A cache asks the moment it is purged: the mark must be
			// the one known by then.
			<-ready
			s := served.Load()
			s.answers.markMu.Lock()
			known := s.answers.mark
			s.answers.markMu.Unlock()
			if now, _, _ := db.DataMark(ctx); known != now {
				t.Errorf("purged %q while the server knew the mark %q, not %q", keys, known, now)
			}
			purged <- keys
			return nil
		})})
	if err != nil {
		t.Fatal(err)
	}
	served.Store(s)
	close(ready)
	defer s.Close()
	if w := askAs(s, "/charts/GB"); w.Code != 404 {
		t.Fatalf("/charts/GB before its first run: %d", w.Code)
	}
	if w := askAs(s, "/worldwide"); w.Code != 200 || strings.Contains(w.Body.String(), "Title new") {
		t.Fatalf("/worldwide before GB's run: %d", w.Code)
	}
	expect := func(step string, want ...string) {
		t.Helper()
		select {
		case got := <-purged:
			slices.Sort(got)
			slices.Sort(want)
			if !slices.Equal(got, want) {
				t.Errorf("%s: purged %q, want %q", step, got, want)
			}
		case <-time.After(time.Minute): // the fault: no purge at all
			t.Fatalf("%s: nothing purged", step)
		}
	}
	expect("the start, the cache never purged: its copies may be from any time", edge.SiteKey)
	regionRun(t, db, "GB", "", t0.Add(time.Hour), worldVideos(t0, "hit", "new")...)
	expect("GB's first run landed: a chart new to every chart page's picker", edge.SiteKey)
	regionRun(t, db, "GB", "", t0.Add(90*time.Minute), worldVideos(t0, "hit", "new")...)
	expect("a run landed in GB", "chart:GB", "feed:GB", "front", "worldwide", "feed:worldwide", "sitemap",
		"video:hit", "video:new", "search")
	// The clock stands still: the server knows the new mark from the
	// purge's own read, as a cache asks the moment it is purged.
	for _, path := range []string{"/charts/GB", "/worldwide"} {
		if w := askAs(s, path); w.Code != 200 || !strings.Contains(w.Body.String(), "Title new") ||
			w.Header().Get("Cache-Control") != edge.PurgedPolicy.String() {
			t.Errorf("%s asked after the purge: %d, Cache-Control %q; want the new run, kept", path, w.Code, w.Header().Get("Cache-Control"))
		}
	}
	if err := db.SaveStats(ctx, []ingest.VideoStats{{ID: "local", ViewCount: 7, At: t0.Add(2 * time.Hour)}}); err != nil {
		t.Fatal(err)
	}
	expect("local tracked", "video:local", "search")
	if err := db.Refreshed(ctx, []ingest.Video{worldVideos(t0, "jp2")[0]}, t0.Add(3*time.Hour)); err != nil {
		t.Fatal(err)
	}
	expect("jp2 refreshed", "video:jp2", "search")
	if _, err := retention.Gone(ctx, db, []string{"duo"}, t0.Add(4*time.Hour)); err != nil {
		t.Fatal(err)
	}
	expect("duo gone", "video:duo", "search")
	if _, err := retention.Prune(ctx, db, retention.Retention{Before: t0.Add(-24 * time.Hour), Batch: 500}); err != nil {
		t.Fatal(err)
	}
	expect("a prune", edge.SiteKey)
}

// purgeTo is one cache in front that hands each purge to f, which says
// whether the cache took it.
type purgeTo func(keys []string) error

func (purgeTo) Caches() []string { return []string{"http://cache.test/"} }

func (f purgeTo) Purge(_ context.Context, _ int, keys []string) error { return f(keys) }

// TestALandingNoOnePurgedIsPurgedByTheNextStart: the mark a cache was
// purged up to is kept in the database once the cache took the purge, so
// a landing made while no server ran, or while the cache refused, is
// purged (what it changed, not the whole site) by the next server to
// start on the database, or when the cache takes purges again.
func TestALandingNoOnePurgedIsPurgedByTheNextStart(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	t0 := time.Date(2026, 11, 20, 9, 0, 0, 0, time.UTC)
	db := storetest.Open(t)
	regionRun(t, db, "GB", "", t0, worldVideos(t0, "old")...)
	purged := make(chan []string, 64)
	var down atomic.Bool
	start := func() *Server {
		s, err := New(Config{DB: db, Listen: ":8080", Public: true, Meter: anyMeter(),
			Clock: clock.Func(func() time.Time { return t0.Add(time.Hour) }), Purge: purgeTo(func(keys []string) error {
				if down.Load() {
					purged <- nil
					return errors.New("the cache is unreachable")
				}
				purged <- keys
				return nil
			})})
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	next := func(step string) []string {
		t.Helper()
		select {
		case got := <-purged:
			slices.Sort(got)
			return got
		case <-time.After(time.Minute): // the fault: no purge at all
			t.Fatalf("%s: nothing purged", step)
			return nil
		}
	}
	landed := []string{"chart:GB", "feed:GB", "front", "worldwide", "feed:worldwide", "sitemap", "video:new", "search"}
	slices.Sort(landed)
	s := start()
	if got := next("the first start"); !slices.Equal(got, []string{edge.SiteKey}) {
		t.Errorf("the first start purged %q, want the whole site", got)
	}
	s.Close()
	regionRun(t, db, "GB", "", t0.Add(time.Hour), worldVideos(t0, "new")...) // while no server runs
	s = start()
	if got := next("a start after a landing"); !slices.Equal(got, landed) {
		t.Errorf("a start after a landing no one purged purged %q, want %q", got, landed)
	}
	down.Store(true)
	regionRun(t, db, "GB", "", t0.Add(2*time.Hour), worldVideos(t0, "new")...)
	next("a purge the cache refuses")
	next("the same purge tried again")
	s.Close()
	down.Store(false)
	for len(purged) > 0 {
		<-purged
	}
	s = start()
	defer s.Close()
	if got := next("a start after the cache refused"); !slices.Equal(got, landed) {
		t.Errorf("a start after the cache refused a landing purged %q, want %q", got, landed)
	}
	for end := time.Now().Add(time.Minute); ; { // the fault: the mark never kept
		mark, _, _ := db.DataMark(ctx)
		kept, _, _, err := db.Purged(ctx, "http://cache.test/")
		if err != nil {
			t.Fatal(err)
		}
		if kept == mark {
			break
		}
		if time.Now().After(end) {
			t.Fatalf("the mark kept for the cache is %q, want the one it was purged up to, %q", kept, mark)
		}
		clock.Sleep(ctx, 10*time.Millisecond) // the mark is kept just after the purge returns
	}
}

// TestReplicasRacingLoseNoMove: two servers on one database purge one
// cache; landings come one after another; the cache is sent each
// landing's keys (by one or both), and the mark kept for it reaches each
// landing's, never left behind one.
func TestReplicasRacingLoseNoMove(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	t0 := time.Date(2026, 11, 20, 9, 0, 0, 0, time.UTC)
	db := storetest.Open(t)
	regionRun(t, db, "GB", "", t0, worldVideos(t0, "old")...)
	var mu sync.Mutex
	took := map[string]bool{}
	for range 2 {
		s, err := New(Config{DB: db, Listen: ":8080", Public: true, Meter: anyMeter(),
			Clock: clock.Func(func() time.Time { return t0.Add(time.Hour) }), Purge: purgeTo(func(keys []string) error {
				mu.Lock()
				defer mu.Unlock()
				for _, k := range keys {
					took[k] = true
				}
				return nil
			})})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
	}
	// The servers' first purge, of the whole site (no mark kept yet), is
	// awaited: one after a landing would cover it by the site's key.
	for end := time.Now().Add(time.Minute); ; clock.Sleep(ctx, 10*time.Millisecond) {
		mark, _, _ := db.DataMark(ctx)
		kept, _, found, err := db.Purged(ctx, "http://cache.test/")
		if err != nil {
			t.Fatal(err)
		}
		if found && kept == mark {
			break
		}
		if time.Now().After(end) {
			t.Fatalf("the servers' first purge: the mark kept is %q, want %q", kept, mark)
		}
	}
	for i := range 5 {
		id := fmt.Sprintf("land%d", i)
		regionRun(t, db, "GB", "", t0.Add(time.Duration(i+1)*time.Hour), worldVideos(t0, id)...)
		mark, _, _ := db.DataMark(ctx)
		for end := time.Now().Add(time.Minute); ; clock.Sleep(ctx, 10*time.Millisecond) { // the fault: the move lost
			kept, _, _, err := db.Purged(ctx, "http://cache.test/")
			if err != nil {
				t.Fatal(err)
			}
			if kept == mark {
				break
			}
			if time.Now().After(end) {
				t.Fatalf("landing %d: the mark kept is %q, want the landing's %q", i+1, kept, mark)
			}
		}
		mu.Lock()
		if !took["video:"+id] {
			t.Errorf("landing %d: the mark kept moved past it, and no replica purged video:%s", i+1, id)
		}
		mu.Unlock()
	}
}

// TestAReadOnlyDatabaseKeepsThePurgedMarkInTheProcess: a server on a
// database it cannot write (a read-only SQLite file) keeps the mark it
// purged a cache up to itself, so a landing is purged by what it changed,
// and the cache is not sent the whole site again at each read.
func TestAReadOnlyDatabaseKeepsThePurgedMarkInTheProcess(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	t0 := time.Date(2026, 11, 20, 9, 0, 0, 0, time.UTC)
	db := storetest.Open(t) // SQLite: a file it can open read-only
	regionRun(t, db, "GB", "", t0, worldVideos(t0, "old")...)
	ro, err := store.OpenExisting(ctx, db.Path())
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	purged := make(chan []string, 64)
	s, err := New(Config{DB: ro, Listen: ":8080", Public: true, Meter: anyMeter(),
		Clock: clock.Func(func() time.Time { return t0.Add(time.Hour) }), Purge: purgeTo(func(keys []string) error {
			slices.Sort(keys)
			purged <- keys
			return nil
		})})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	next := func(step string) []string {
		t.Helper()
		select {
		case got := <-purged:
			return got
		case <-time.After(time.Minute): // the fault: no purge at all
			t.Fatalf("%s: nothing purged", step)
			return nil
		}
	}
	if got := next("the start"); !slices.Equal(got, []string{edge.SiteKey}) {
		t.Errorf("the start purged %q, want the whole site", got)
	}
	regionRun(t, db, "GB", "", t0.Add(time.Hour), worldVideos(t0, "new")...)
	landed := []string{"chart:GB", "feed:GB", "front", "worldwide", "feed:worldwide", "sitemap", "video:new", "search"}
	slices.Sort(landed)
	if got := next("a landing"); !slices.Equal(got, landed) {
		t.Errorf("after a landing, purged %q, want %q", got, landed)
	}
}

// TestChangedKeysNameTheAnswers: the keys a change purges are the keys
// the answers showing it carry.
func TestChangedKeysNameTheAnswers(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 11, 20, 9, 0, 0, 0, time.UTC)
	s := sharedServer(t, worldDB(t, t0), func() time.Time { return t0.Add(time.Hour) })
	for _, rt := range readerRoutes {
		if rt.path == "/robots.txt" || rt.path == "/static/nopic.svg" {
			continue // no run changes them
		}
		carried := strings.Fields(askAs(s, rt.path).Header().Get(edge.SurrogateKey))
		if !slices.ContainsFunc(carried, func(k string) bool {
			return slices.Contains([]string{"chart:US", "chart:US:10", "chart:GB", "chart:JP", "worldwide", "search", "sitemap", "front"}, k) ||
				strings.HasPrefix(k, "video:")
		}) {
			t.Errorf("%s carries %q: no key a landing purges", rt.path, carried)
		}
	}
}

// TestANewChartPurgesTheWholeSite: a chart that held no entry before is in
// every chart page's picker, so its first landing purges the whole site;
// a chart landing again names its own answers alone.
func TestANewChartPurgesTheWholeSite(t *testing.T) {
	t.Parallel()
	in := []store.ChartName{{Region: "IN"}}
	if got := changedKeys(store.Changes{Charts: in, New: in}); !slices.Equal(got, []string{edge.SiteKey}) {
		t.Errorf("a new chart's landing purges %q, want %q", got, edge.SiteKey)
	}
	if got := changedKeys(store.Changes{Charts: in}); slices.Contains(got, edge.SiteKey) || !slices.Contains(got, "chart:IN") {
		t.Errorf("a chart landing again purges %q, want its own keys, not the site's", got)
	}
}

// TestWithACacheAPageIsBuiltWhenAskedAndKeptUntilALandingChangesIt: with a
// cache in front, no watcher builds pages ahead of the readers; after a
// landing, a kept page the landing did not change (by the purge's keys) is
// served under the new mark as it was, without a build, and a page it
// changed is built when asked, with the landing in it.
func TestWithACacheAPageIsBuiltWhenAskedAndKeptUntilALandingChangesIt(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 11, 20, 9, 0, 0, 0, time.UTC)
	db := storetest.Open(t)
	regionRun(t, db, "US", "", t0, worldVideos(t0, "local", "hit")...)
	regionRun(t, db, "JP", "", t0.Add(time.Minute), worldVideos(t0, "duo", "jp2")...)
	purged := make(chan []string, 16)
	s, err := New(Config{DB: db, Listen: ":8080", Public: true, Meter: anyMeter(),
		Clock: clock.Func(func() time.Time { return t0.Add(time.Hour) }),
		Purge: purgeTo(func(keys []string) error { purged <- keys; return nil })})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	await := func(step string) []string {
		t.Helper()
		select {
		case keys := <-purged:
			return keys
		case <-time.After(time.Minute): // the fault: no purge at all
			t.Fatalf("%s: nothing purged", step)
			return nil
		}
	}
	await("the start")
	etags := map[string]string{}
	for _, path := range []string{"/charts/JP", "/charts/US"} {
		w := askAs(s, path)
		if w.Code != 200 {
			t.Fatalf("%s: %d", path, w.Code)
		}
		etags[path] = w.Header().Get("ETag")
	}
	if s.answers.watching.Load() {
		t.Error("a watcher builds pages ahead of the readers with a cache in front")
	}
	built := s.answers.builds.Load()
	regionRun(t, db, "US", "", t0.Add(time.Hour), worldVideos(t0, "hit", "new")...)
	if keys := await("US landed"); slices.Contains(keys, "chart:JP") || !slices.Contains(keys, "chart:US") {
		t.Fatalf("US landed: purged %q, want chart:US and not chart:JP", keys)
	}
	w := askAs(s, "/charts/JP")
	if w.Code != 200 || w.Header().Get("ETag") != etags["/charts/JP"] {
		t.Errorf("/charts/JP after US landed: %d, ETag %q; want 200 and the copy before, %q", w.Code, w.Header().Get("ETag"), etags["/charts/JP"])
	}
	if n := s.answers.builds.Load() - built; n != 0 {
		t.Errorf("/charts/JP, which US's landing did not change, was built %d times after it; want kept as it was", n)
	}
	w = askAs(s, "/charts/US")
	if w.Code != 200 || !strings.Contains(w.Body.String(), "Title new") {
		t.Errorf("/charts/US after US landed: %d; want the landing in it", w.Code)
	}
	if n := s.answers.builds.Load() - built; n != 1 {
		t.Errorf("%d builds after US landed and both charts were asked for; want /charts/US's one", n)
	}
}

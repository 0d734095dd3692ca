package wiring_test

import (
	"bytes"
	"context"
	"log/slog"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/clock"
	"github.com/ingestworks/ingest/costs"
	"github.com/ingestworks/ingest/internal/rig/passtest"
	"github.com/ingestworks/ingest/internal/rig/storetest"
	"github.com/ingestworks/ingest/jobs"
	"github.com/ingestworks/ingest/publish"
	"github.com/ingestworks/ingest/ratelimit"
	"github.com/ingestworks/ingest/web"
	"github.com/ingestworks/ingest/wiring"
)

// publicSite is the address the published pages and the server name.
const publicSite = "https://charts.example.org/"

// published is the site over a store the passes filled twice (US, GB and
// US's music chart) published into a directory, and the site serve
// --public builds over the same store, with the search at searchURL ("":
// none).
func published(t *testing.T, searchURL string) (dir string, ui *web.Server, res publish.Result) {
	t.Helper()
	ctx := context.Background()
	db := storetest.Open(t)
	up := passtest.New(t, db)
	for range 2 {
		up.Fill(t, "US", "GB", "US/10")
	}
	pub, _ := url.Parse(publicSite)
	h := &wiring.Host{Clock: clock.System, Costs: costs.Default(), Logger: slog.New(slog.DiscardHandler)}
	sv := wiring.Serve{Schedule: wiring.Schedule{Timetable: jobs.Timetable{Every: time.Hour}}, QuotaKey: passtest.QuotaKey, APIKey: passtest.Key,
		Standing: ingest.StandardStanding(), Web: web.Config{PublicURL: pub}}
	dir = t.TempDir()
	res, err := h.Publish(ctx, wiring.On(db, ""), wiring.Publish{Dir: dir, Serve: sv, SearchURL: searchURL})
	if err != nil {
		t.Fatal(err)
	}
	sv.Plans = ratelimit.DefaultAPIPlans()
	sv.Web.Listen, sv.Web.Public, sv.Web.SearchURL, sv.Web.NoSearch = "0.0.0.0:8080", true, searchURL, searchURL == ""
	sv.Web.Directory = true // its API index, as a publish's, lists what a directory holds
	ui, closeFn, err := h.OpenWeb(ctx, wiring.On(db, ""), sv)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(closeFn)
	return dir, ui, res
}

// files are the published files (the manifest's list), each with the path
// it answers: x/index.EXT answers /x, any other file its own path.
func files(t *testing.T, dir string) map[string]string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, publish.ManifestName))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, f := range strings.Fields(string(b)) {
		p := "/" + f
		if d, base := filepath.Split(f); strings.HasPrefix(base, "index.") {
			p = "/" + strings.TrimSuffix(d, "/")
		}
		out[f] = p
	}
	return out
}

// TestPublishedFilesHoldTheServersBytes: every published file holds the
// bytes serve --public, configured alike, sends for its path; the site's
// every chart, its JSON and feed, the worldwide page, the sitemap,
// robots.txt, the stylesheets and the images they name, and each video of
// the latest charts is there; no file is left staged.
func TestPublishedFilesHoldTheServersBytes(t *testing.T) {
	t.Parallel()
	dir, ui, res := published(t, "")
	fs := files(t, dir)
	if len(fs) != res.Files || res.Written != res.Files {
		t.Errorf("%d files listed, the publish says %d, %d written", len(fs), res.Files, res.Written)
	}
	for f, p := range fs {
		got, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil {
			t.Fatal(err)
		}
		rec := httptest.NewRecorder()
		ui.ServeHTTP(rec, httptest.NewRequest("GET", p, nil))
		if rec.Code != 200 || !bytes.Equal(rec.Body.Bytes(), got) {
			t.Errorf("%s: %d bytes published, the server answers %s with %d and %d bytes", f, len(got), p, rec.Code, rec.Body.Len())
		}
	}
	for _, want := range []string{"index.html", "worldwide/index.html", "worldwide/feed/index.atom", "api/v1/index.json", "api/v1/worldwide/index.json",
		"robots.txt", "sitemap.xml", "charts/US/index.html", "charts/US/feed/index.atom", "api/v1/charts/US/index.json", "charts/GB/index.html"} {
		if _, ok := fs[want]; !ok {
			t.Errorf("no %s published", want)
		}
	}
	kinds := map[string]int{}
	for f := range fs {
		kinds[strings.SplitN(f, "/", 2)[0]+"/"+filepath.Ext(f)]++
	}
	if kinds["videos/.html"] == 0 || kinds["static/.css"] == 0 || kinds["static/.svg"] == 0 {
		t.Errorf("files by kind %v: want videos, stylesheets and their images", kinds)
	}
	matches, _ := filepath.Glob(filepath.Join(dir, "*", ".*publish-*"))
	if len(matches) > 0 {
		t.Errorf("staged files left: %v", matches)
	}
}

var siteLink = regexp.MustCompile(`(?:href|src|action)="(/[^"/][^"]*|/)"`)

// TestPublishedLinksResolve: every link of every published page to the
// site's own path is a published file, but the search's and the sign-in's,
// which a publish with no --search-url leaves out of the pages; with
// --search-url the form points there.
func TestPublishedLinksResolve(t *testing.T) {
	t.Parallel()
	dir, _, _ := published(t, "")
	fs := files(t, dir)
	paths := map[string]bool{}
	for _, p := range fs {
		paths[p] = true
	}
	for f := range fs {
		if filepath.Ext(f) == ".css" { // its selectors name addresses too
			continue
		}
		b, _ := os.ReadFile(filepath.Join(dir, f))
		for _, m := range siteLink.FindAllStringSubmatch(string(b), -1) {
			u, _ := url.Parse(m[1])
			if strings.Contains(m[1], "/search") || strings.HasPrefix(u.Path, "/login") {
				t.Errorf("%s links %s with no search to point at", f, m[1])
				continue
			}
			if !paths[u.Path] && u.Path != "/charts" {
				t.Errorf("%s links %s: no file answers it", f, m[1])
			}
		}
	}
	withSearch, _, _ := published(t, "https://search.example.org/search")
	b, _ := os.ReadFile(filepath.Join(withSearch, "charts", "US", "index.html"))
	if !strings.Contains(string(b), `<form action="https://search.example.org/search" method="get" role="search">`) {
		t.Errorf("with --search-url, the chart's page has no form pointing at it")
	}
}

// TestAPartialPublishAfterALandingIsTheWholeOne: after a landing, a
// publish that asks only the pages the changes name (web.ChangedPaths) and
// those they newly link leaves the directory holding, for every file a
// whole publish of the same data writes, the same bytes; it asks and
// writes far fewer pages.
func TestAPartialPublishAfterALandingIsTheWholeOne(t *testing.T) {
	ctx := context.Background()
	db := storetest.Open(t)
	up := passtest.New(t, db)
	for range 2 {
		up.Fill(t, "US", "GB", "US/10")
	}
	pub, _ := url.Parse(publicSite)
	h := &wiring.Host{Clock: clock.System, Costs: costs.Default(), Logger: slog.New(slog.DiscardHandler)}
	sv := wiring.Serve{Schedule: wiring.Schedule{Timetable: jobs.Timetable{Every: time.Hour}}, QuotaKey: passtest.QuotaKey, APIKey: passtest.Key,
		Standing: ingest.StandardStanding(), Web: web.Config{PublicURL: pub}}
	part := t.TempDir()
	full, err := h.Publish(ctx, wiring.On(db, ""), wiring.Publish{Dir: part, Serve: sv})
	if err != nil {
		t.Fatal(err)
	}
	_, since, err := db.DataMark(ctx)
	if err != nil {
		t.Fatal(err)
	}

	time.Sleep(10 * time.Millisecond) // the landing's rows after the mark's time
	up.Fill(t, "US")
	c, err := db.ChangesSince(ctx, since)
	if err != nil {
		t.Fatal(err)
	}
	only, whole := web.ChangedPaths(c)
	if whole || len(only) == 0 {
		t.Fatalf("a landing of US named %v (whole %v): want its pages", only, whole)
	}
	res, err := h.Publish(ctx, wiring.On(db, ""), wiring.Publish{Dir: part, Serve: sv, Only: only})
	if err != nil {
		t.Fatal(err)
	}
	again := t.TempDir()
	if _, err := h.Publish(ctx, wiring.On(db, ""), wiring.Publish{Dir: again, Serve: sv}); err != nil {
		t.Fatal(err)
	}
	want, got := files(t, again), files(t, part)
	for f := range want {
		a, errA := os.ReadFile(filepath.Join(again, f))
		b, errB := os.ReadFile(filepath.Join(part, f))
		if errA != nil || errB != nil || !bytes.Equal(a, b) {
			t.Errorf("%s: the partial publish's file differs from the whole one's (%v, %v)", f, errA, errB)
		}
		if _, ok := got[f]; !ok {
			t.Errorf("%s: written by a whole publish, not in the partial one's list", f)
		}
	}
	t.Logf("a whole publish: %d files, %d written; the partial one after US landed: %d pages named, %d written, %d files now (%d a whole publish would remove)",
		full.Files, full.Written, len(only), res.Written, res.Files, len(got)-len(want))
	if res.Written == 0 {
		t.Errorf("the partial publish after a landing wrote nothing")
	}

	// A chart new to the site is in every chart page's picker: every page
	// is asked again.
	_, since, err = db.DataMark(ctx)
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(10 * time.Millisecond)
	up.Fill(t, "IN")
	if c, err = db.ChangesSince(ctx, since); err != nil {
		t.Fatal(err)
	}
	if only, whole := web.ChangedPaths(c); !whole {
		t.Errorf("a chart new to the site named %d pages, want every page asked again", len(only))
	}
}

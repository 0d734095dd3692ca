package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// frontProxy is the address the tests' backends.vcl trusts as a front
// proxy (a TLS terminator) to name the client in X-Forwarded-For.
const frontProxy = "127.0.0.3"

// varnishOrigin is the backends.vcl the shipped VCL includes, naming one
// origin at addr, purgers, the addresses allowed to purge, and frontProxy.
func varnishOrigin(addr, purgers string) string {
	host, port, _ := net.SplitHostPort(addr)
	return fmt.Sprintf(`backend origin {
	.host = %q;
	.port = %q;
	.probe = { .url = "/healthz"; .interval = 1s; .timeout = 1s; .window = 2; .threshold = 1; }
}
sub ingest_origins { origins.add_backend(origin); }
acl ingest_purgers { %q; }
acl ingest_front_proxies { %q; }
`, host, port, purgers, frontProxy)
}

// startVarnish runs Debian's varnishd on the shipped deploy/varnish/ingest.vcl
// in front of the origin at origin, and gives its address.
func startVarnish(t *testing.T, origin, purgers string) string {
	t.Helper()
	if _, err := exec.LookPath("varnishd"); err != nil {
		t.Skip("varnishd not installed (make deps installs Debian's varnish and varnish-modules)")
	}
	addr := closedAddr(t)
	startVarnishWith(t, addr, varnishOrigin(origin, purgers))
	return addr
}

// runVarnish runs varnishd on dir's ingest.vcl (and the backends.vcl it
// includes), listening on addr, until the test ends.
func runVarnish(t *testing.T, dir, addr string) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	// -j none: the test's own user, not varnishd's jail, which cannot
	// read a test's directory.
	cmd := exec.CommandContext(ctx, "varnishd", "-F", "-j", "none", "-n", filepath.Join(dir, "work"), "-a", addr,
		"-f", filepath.Join(dir, "ingest.vcl"), "-p", "vcl_path="+dir, "-s", "malloc,256m")
	out := &lockedBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatalf("varnishd: %v", err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	if !waitFor(30*time.Second, func() bool {
		c, err := net.Dial("tcp", addr)
		if err == nil {
			c.Close()
		}
		return err == nil
	}) {
		t.Fatalf("varnishd never listened on %s:\n%s", addr, out)
	}
	// The first answers are the cache's only once its probe calls every
	// origin healthy: before, a reader's fetch goes to no backend.
	var list []byte
	if !waitFor(60*time.Second, func() bool {
		list, _ = exec.Command("varnishadm", "-n", filepath.Join(dir, "work"), "backend.list").CombinedOutput()
		return backendsHealthy(string(list))
	}) {
		t.Fatalf("varnishd's probe never called its origins healthy:\n%s\n%s", list, out)
	}
}

// backendsHealthy reads varnishadm's backend.list: at least one backend,
// and every one healthy.
func backendsHealthy(list string) bool {
	lines := strings.Split(strings.TrimSpace(list), "\n")
	if len(lines) < 2 || !strings.HasPrefix(lines[0], "Backend name") {
		return false
	}
	for _, l := range lines[1:] {
		if f := strings.Fields(l); len(f) < 4 || f[3] != "healthy" {
			return false
		}
	}
	return true
}

// cached asks the cache at addr for path until its copy is kept (a hit),
// and says whether it was within the setup's bound.
func cached(t *testing.T, addr, path string, header map[string]string) bool {
	t.Helper()
	return waitFor(60*time.Second, func() bool {
		status, _, hit := through(t, addr, http.MethodGet, path, "", header)
		return status == http.StatusOK && hit == "hit"
	})
}

// through asks the cache at addr for path with the headers given, from
// the local address from ("" for any), and gives the answer's status,
// body and X-Cache.
func through(t *testing.T, addr, method, path, from string, header map[string]string) (int, string, string) {
	t.Helper()
	resp, body := throughWhole(t, addr, method, path, from, header)
	return resp.StatusCode, body, resp.Header.Get("X-Cache")
}

// throughWhole is through's answer whole, its body as sent (gzip not
// undone); a "Host" in header is the request's Host.
func throughWhole(t *testing.T, addr, method, path, from string, header map[string]string) (*http.Response, string) {
	t.Helper()
	d := &net.Dialer{Timeout: 5 * time.Second}
	if from != "" {
		d.LocalAddr = &net.TCPAddr{IP: net.ParseIP(from)}
	}
	client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{DialContext: d.DialContext, DisableCompression: true},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	req, err := http.NewRequest(method, "http://"+addr+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	if h := header["Host"]; h != "" {
		req.Host = h
	}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("%s %s through the cache: %v", method, path, err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp, string(body)
}

// originFront is an origin as the cache sees it: serve behind a proxy
// that records what the cache asked, and answers 503 to every path but
// the probe's while failing is set.
type originFront struct {
	addr    string
	failing atomic.Bool
	failed  atomic.Int64
	mu      sync.Mutex
	asked   []*http.Request // the cache's requests but the probe's
}

// startFront puts an originFront before the serve at origin.
func startFront(t *testing.T, origin string) *originFront {
	t.Helper()
	o := &originFront{}
	target, _ := url.Parse("http://" + origin)
	proxy := httputil.NewSingleHostReverseProxy(target)
	front := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/healthz" {
			o.mu.Lock()
			o.asked = append(o.asked, r.Clone(context.Background()))
			o.mu.Unlock()
		}
		if o.failing.Load() && r.URL.Path != "/healthz" {
			o.failed.Add(1)
			w.Header().Set("Retry-After", "1")
			w.Header().Set("Cache-Control", "private, no-store")
			http.Error(w, "busy", http.StatusServiceUnavailable)
			return
		}
		proxy.ServeHTTP(w, r)
	})}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go front.Serve(ln)
	t.Cleanup(func() { front.Close() })
	o.addr = ln.Addr().String()
	return o
}

// since is what the cache asked the origin after the first n of its
// requests, and how many it has asked in all.
func (o *originFront) since(n int) ([]*http.Request, int) {
	o.mu.Lock()
	defer o.mu.Unlock()
	return slices.Clone(o.asked[min(n, len(o.asked)):]), len(o.asked)
}

// TestTheShippedVCLKeepsPublicAnswersAndNoPrivateOne: Varnish, with the
// shipped VCL, in front of serve --public: a reader's page and its JSON
// come from the cache on the second ask (a tracking cookie dropped); an
// answer to a token or a session, and the operator's pages, are passed
// and never served to the next reader without credentials; a purge of a
// chart's key from an allowed address renews its page within two seconds,
// and from any other is refused; with the origin stopped just after every
// copy was purged, the copies are still served.
func TestTheShippedVCLKeepsPublicAnswersAndNoPrivateOne(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.mustRun(0, "run", "--once", "--regions", "US,GB")
	token := "edge-operator-token-0123456789"
	h.set("INGEST_UI_TOKEN", token)
	h.set("INGEST_PUBLIC_URL", "https://charts.example.org")
	origin := closedAddr(t)
	p := h.start("serve", "--listen", origin, "--public", "--cache-control", "s-maxage=3600,stale-while-revalidate=1,stale-if-error=3600")
	if !waitFor(30*time.Second, func() bool { return healthy("http://" + origin) }) {
		t.Fatalf("serve --public never answered\n%s", p.out)
	}
	cache := startVarnish(t, origin, "127.0.0.2")

	// A first answer may be one the cache keeps for a moment only (a copy
	// from before a landing): the asks go on until one is kept.
	for _, path := range []string{"/charts/US", "/api/v1/charts/US", "/worldwide", "/sitemap.xml", "/robots.txt"} {
		if !cached(t, cache, path, map[string]string{"Cookie": "_ga=GA1.1.1"}) {
			t.Errorf("%s asked again and again, with a tracking cookie: never 200 from the cache", path)
		}
	}

	// Credentials: passed, and what they were answered never reaches the
	// next reader.
	for _, c := range []struct {
		path   string
		header map[string]string
	}{
		{"/charts/US", map[string]string{"Authorization": "Bearer " + token}},
		{"/api/v1/quota", map[string]string{"Authorization": "Bearer " + token}},
		{"/operator", map[string]string{"Authorization": "Bearer " + token}},
		{"/charts/GB", map[string]string{"Cookie": "ingest_session=anything"}},
	} {
		status, body, hit := through(t, cache, http.MethodGet, c.path, "", c.header)
		if hit != "pass" {
			t.Errorf("%s with %v: X-Cache %q (%d), want passed to the origin", c.path, c.header, hit, status)
		}
		if c.path == "/api/v1/quota" || c.path == "/operator" {
			again, abody, ahit := through(t, cache, http.MethodGet, c.path, "", nil)
			if again == http.StatusOK || ahit == "hit" || (abody == body && status == http.StatusOK) {
				t.Errorf("%s asked without credentials after a token's ask: %d, X-Cache %q: a private answer was served from the cache", c.path, again, ahit)
			}
		}
	}

	// Purges: refused from an address not listed, honoured from one: the
	// next asks get the page fetched anew (its first delivery a miss)
	// within two seconds, the old copy answering meanwhile.
	if status, _, _ := through(t, cache, "PURGE", "/", "127.0.0.1", map[string]string{"xkey-purge": "chart:US"}); status != http.StatusForbidden {
		t.Errorf("a purge from 127.0.0.1, not a purger: %d, want 403", status)
	}
	if _, _, hit := through(t, cache, http.MethodGet, "/charts/US", "", nil); hit != "hit" {
		t.Errorf("/charts/US after a refused purge: X-Cache %q, want its copy kept", hit)
	}
	if status, body, _ := through(t, cache, "PURGE", "/", "127.0.0.2", map[string]string{"xkey-purge": "chart:US"}); status != http.StatusOK || !strings.Contains(body, "purged") {
		t.Errorf("a purge of chart:US from a purger: %d %q, want 200", status, body)
	}
	var seen []string
	renewed := waitFor(2*time.Second, func() bool {
		_, _, hit := through(t, cache, http.MethodGet, "/charts/US", "", nil)
		seen = append(seen, hit)
		return slices.Contains(seen, "stale") && hit == "hit"
	})
	if !renewed {
		t.Errorf("/charts/US after its key was purged: answered %q, want its stale copy once and then the page fetched anew, within 2 s", seen)
	}

	// The origin down: every page kept is still served, past its lifetime.
	// Each is kept fresh first: a stale copy's refresh still under way
	// would land after the purge below, fresh.
	for _, path := range []string{"/charts/US", "/charts/GB", "/api/v1/charts/US", "/worldwide"} {
		if !cached(t, cache, path, nil) {
			t.Fatalf("%s never came from the cache", path)
		}
	}
	// Every copy made stale, as a landing just before the outage would.
	if status, _, _ := through(t, cache, "PURGE", "/", "127.0.0.2", map[string]string{"xkey-purge": "site"}); status != http.StatusOK {
		t.Errorf("a purge of the whole site: %d", status)
	}
	p.signal(t, os.Interrupt)
	if _, exited := p.wait(30 * time.Second); !exited {
		t.Fatal("serve did not stop")
	}
	// Past stale-while-revalidate and the probe's window, the copies are
	// stale and the origin sick; a slower machine only makes them staler.
	time.Sleep(4 * time.Second)
	for _, path := range []string{"/charts/US", "/charts/GB", "/api/v1/charts/US", "/worldwide"} {
		if status, _, hit := through(t, cache, http.MethodGet, path, "", nil); status != http.StatusOK || hit != "stale" {
			t.Errorf("%s with the origin down: %d, X-Cache %q, want the kept copy", path, status, hit)
		}
	}
}

// TestTheShippedVCLServesAStaleCopyWhenTheOriginsFailAReader: an origin
// that is up (its probe answers) but answers a page's fetch with 503 on
// every try (busy, or stopping between two probes) costs a reader no
// error while the cache holds a copy of the page within stale-if-error:
// past stale-while-revalidate, the reader's own fetch fails on each try,
// and the cache answers its stale copy; a private path's failure is still
// the reader's, passed on as it came.
func TestTheShippedVCLServesAStaleCopyWhenTheOriginsFailAReader(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.mustRun(0, "run", "--once", "--regions", "US")
	h.set("INGEST_PUBLIC_URL", "https://charts.example.org")
	h.set("INGEST_UI_TOKEN", "edge-operator-token-0123456789")
	origin := closedAddr(t)
	p := h.start("serve", "--listen", origin, "--public", "--cache-control", "s-maxage=3600,stale-while-revalidate=1,stale-if-error=3600")
	if !waitFor(30*time.Second, func() bool { return healthy("http://" + origin) }) {
		t.Fatalf("serve --public never answered\n%s", p.out)
	}
	front := startFront(t, origin)
	cache := startVarnish(t, front.addr, "127.0.0.2")

	if !cached(t, cache, "/charts/US", nil) {
		t.Fatalf("/charts/US never came from the cache")
	}
	// A landing's purge makes the copy stale; the origin then fails every
	// fetch, past the while a stale copy is served beside a refresh.
	if status, _, _ := through(t, cache, "PURGE", "/", "127.0.0.2", map[string]string{"xkey-purge": "chart:US"}); status != http.StatusOK {
		t.Fatalf("a purge of chart:US: %d", status)
	}
	front.failing.Store(true)
	time.Sleep(11 * time.Second)
	status, body, hit := through(t, cache, http.MethodGet, "/charts/US", "", nil)
	if status != http.StatusOK || hit != "stale" || !strings.Contains(body, "</html>") {
		t.Errorf("/charts/US while the origin answers 503 to every fetch: %d, X-Cache %q, want its stale copy", status, hit)
	}
	if front.failed.Load() == 0 {
		t.Errorf("the cache never asked the failing origin: the stale copy was not put to the test")
	}
	if status, _, _ := through(t, cache, http.MethodGet, "/quota", "", map[string]string{"Authorization": "Bearer edge-operator-token-0123456789"}); status != http.StatusServiceUnavailable {
		t.Errorf("/quota while the origin fails: %d, want its 503 passed on", status)
	}
}

// TestTheShippedVCLCompilesWithTheExampleBackends: the example
// backends.vcl defines everything the shipped VCL names (the origins, the
// purgers, the trusted front proxies), so that a copy of it is a start
// that loads.
func TestTheShippedVCLCompilesWithTheExampleBackends(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("varnishd"); err != nil {
		t.Skip("varnishd not installed (make deps installs Debian's varnish and varnish-modules)")
	}
	dir := t.TempDir()
	for from, to := range map[string]string{"ingest.vcl": "ingest.vcl", "backends.example.vcl": "backends.vcl"} {
		b, err := os.ReadFile(filepath.Join("../../deploy/varnish", from))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, to), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	out, err := exec.Command("varnishd", "-C", "-j", "none", "-n", filepath.Join(dir, "work"), "-p", "vcl_path="+dir, "-f", filepath.Join(dir, "ingest.vcl")).CombinedOutput()
	if err != nil {
		lines := strings.Split(string(out), "\n")
		t.Errorf("varnishd -C on ingest.vcl with backends.example.vcl: %v\n%s", err, strings.Join(lines[max(0, len(lines)-15):], "\n"))
	}
}

package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/ingestworks/ingest/internal/rig/browsertest"
)

// anyAddr is a free port on every interface: a non-loopback listener,
// and the loopback address a test reaches it on.
func anyAddr(t *testing.T) (listen, reach string) {
	t.Helper()
	_, port, _ := net.SplitHostPort(closedAddr(t))
	return "0.0.0.0:" + port, "127.0.0.1:" + port
}

// startListener starts `ingest args...` on a database one run filled and waits
// for its /healthz.
func startListener(t *testing.T, token string, args ...string) (*dashboard, string) {
	t.Helper()
	h := newHarness(t)
	h.mustRun(0, "run", "--once", "--regions", "US")
	if token != "" {
		h.set("INGEST_UI_TOKEN", token)
	}
	loopback := args[len(args)-1] == "loopback"
	if loopback {
		args = args[:len(args)-1]
	}
	// A free port found here can be taken by another test's process before
	// the binary binds it: a listener that exits saying so gets another.
	for try := 1; ; try++ {
		listen, reach := anyAddr(t)
		if loopback {
			listen = reach
		}
		p := h.start(append(args, "--listen", listen)...)
		d := &dashboard{h: h, base: "http://" + reach, proc: p}
		up := waitFor(30*time.Second, func() bool {
			return siteServed(d.base) || p.exited()
		}) && !p.exited()
		if up {
			return d, listen
		}
		if try < 3 && p.exited() && strings.Contains(p.out.String(), "address already in use") {
			continue
		}
		t.Fatalf("ingest %s --listen %s never served its site\n%s", args[0], listen, p.out)
	}
}

// TestListenerRules: the probes answer without a token on every listener,
// and /metrics (with the Go and process series, serve's too) on every
// one but a --public one; with INGEST_UI_TOKEN the rest asks for it (a
// script gets a 401 in JSON, pages or not); --public opens the readers'
// routes to anyone and keeps the operator's, /metrics among them, behind
// the token, absent without one; without either, a non-loopback listener
// serves only the probes.
func TestListenerRules(t *testing.T) {
	t.Parallel()
	type want map[string]int // path -> status without the token
	for _, tc := range []struct {
		name  string
		token string
		args  []string
		want  want
		log   string // in the process's output
	}{
		{"serve with a token", uiToken, []string{"serve"},
			want{"/healthz": 200, "/readyz": 200, "/metrics": 200, "/api/v1/quota": 401, "/": 401, "/charts/US": 401, "/api/v1/charts/US": 401,
				"/login": 200, "/static/style.css": 200}, ""},
		{"serve --public", "", []string{"serve", "--public"},
			want{"/healthz": 200, "/readyz": 200, "/metrics": 404, "/api/v1/quota": 404, "/api/v1/runs": 404, "/operator": 404, "/": 200,
				"/api/v1/charts/US": 200, "/api/v1": 200, "/charts/US": 200}, ""},
		{"serve --public with a token", uiToken, []string{"serve", "--public"},
			want{"/healthz": 200, "/readyz": 200, "/metrics": 401, "/api/v1/quota": 401, "/api/v1/runs": 401, "/operator": 401, "/": 200,
				"/api/v1/charts/US": 200, "/search?q=a": 200}, ""},
		{"serve on loopback", "", []string{"serve", "loopback"},
			want{"/healthz": 200, "/metrics": 200, "/api/v1/quota": 200, "/charts/US": 200}, ""},
		{"run with a token", uiToken, []string{"run", "--regions", "US"},
			want{"/healthz": 200, "/readyz": 200, "/metrics": 200, "/quota": 401, "/api/v1/quota": 401, "/": 401, "/charts/US": 401}, ""},
		{"run --public with a token", uiToken, []string{"run", "--regions", "US", "--public"},
			want{"/healthz": 200, "/readyz": 200, "/metrics": 401, "/quota": 401, "/api/v1/quota": 401, "/operator": 401, "/charts/US": 200,
				"/api/v1/charts/US": 200}, ""},
		{"run --public", "", []string{"run", "--regions", "US", "--public"},
			want{"/healthz": 200, "/metrics": 404, "/quota": 404, "/api/v1/runs": 404, "/operator": 404, "/charts/US": 200}, ""},
		{"run on loopback", "", []string{"run", "--regions", "US", "loopback"},
			want{"/metrics": 200, "/quota": 200, "/api/v1/quota": 200, "/charts/US": 200}, ""},
		{"run without a token", "", []string{"run", "--regions", "US"},
			want{"/healthz": 200, "/readyz": 200, "/metrics": 200, "/quota": 404, "/api/v1/quota": 404, "/": 404, "/login": 404, "/static/style.css": 404},
			"serves only /healthz, /readyz and /metrics"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			d, _ := startListener(t, tc.token, tc.args...)
			for path, status := range tc.want {
				code, body := d.get(t, path, false)
				if code != status {
					t.Errorf("%s without a token: got %d, want %d\n%.300s", path, code, status, body)
				}
				if code == 401 && !json.Valid(body) {
					t.Errorf("%s: the 401 is not JSON: %s", path, body)
				}
				if tc.token != "" && status == 401 {
					if code, body := d.get(t, path, true); code != 200 {
						t.Errorf("%s with the token: got %d\n%.300s", path, code, body)
					}
				}
			}
			if code, body := d.get(t, "/metrics", tc.token != ""); code == 200 {
				for _, series := range []string{"go_goroutines", "process_resident_memory_bytes", "ingest_ui_auth_failures_total"} {
					if !strings.Contains(string(body), series) {
						t.Errorf("/metrics has no %s", series)
					}
				}
			}
			if !strings.Contains(d.proc.out.String(), tc.log) {
				t.Errorf("the log does not say %q:\n%s", tc.log, d.proc.out)
			}
		})
	}
}

// TestServeRefusesAnOpenPublicListener: serve without a token on a
// non-loopback address exits 2 naming INGEST_UI_TOKEN and --public,
// before it opens anything.
func TestServeRefusesAnOpenPublicListener(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	listen, _ := anyAddr(t)
	r := h.mustRun(2, "serve", "--listen", listen)
	for _, want := range []string{"INGEST_UI_TOKEN", "--public", listen} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("stderr does not name %s: %s", want, r.stderr)
		}
	}
}

// TestListenerRulesInBrowser: as a person with a browser finds them, on the
// daemon's non-loopback listener: with a token, the dashboard is the
// sign-in and /healthz is open; without one, only the operational
// endpoints answer and the rest says why.
func TestListenerRulesInBrowser(t *testing.T) {
	t.Parallel()
	ctx := browsertest.Tab(t) // skips before anything is run when there is no chromium
	d, _ := startListener(t, uiToken, "run", "--regions", "US")
	browsertest.Do(t, ctx, "open the dashboard", chromedp.Navigate(d.base+"/charts/US"), chromedp.WaitVisible(chromedp.CSS(`form.login`)))
	if h1 := browsertest.Text(t, ctx, "h1"); h1 != "Sign in" {
		t.Errorf("with a token set, /charts/US shows %q, want the sign-in page", h1)
	}
	browsertest.Do(t, ctx, "open /healthz", chromedp.Navigate(d.base+"/healthz"), chromedp.WaitVisible(chromedp.CSS(`body`)))
	if got := browsertest.Text(t, ctx, "body"); !strings.Contains(got, `"ok"`) {
		t.Errorf("/healthz in a browser, with no sign-in: %q", got)
	}
	browsertest.Do(t, ctx, "sign in", chromedp.Navigate(d.base+"/login"), chromedp.SendKeys(chromedp.CSS(`input[name=token]`), uiToken),
		chromedp.Submit(chromedp.CSS(`form.login`)), chromedp.WaitVisible(chromedp.CSS(`main :is(section.top, p.empty)`)))
	if h1 := browsertest.Text(t, ctx, "h1"); h1 != "Trending on YouTube" {
		t.Errorf("signed in: %q, want the front page", h1)
	}

	open, _ := startListener(t, "", "run", "--regions", "US")
	browsertest.Do(t, ctx, "open the dashboard without a token", chromedp.Navigate(open.base+"/"), chromedp.WaitVisible(chromedp.CSS(`body`)))
	if got := browsertest.Text(t, ctx, "body"); !strings.Contains(got, "INGEST_UI_TOKEN") || strings.Contains(got, "Overview") {
		t.Errorf("/ on an open non-loopback listener shows %q, want why it is not served", got)
	}
	browsertest.Do(t, ctx, "open /metrics", chromedp.Navigate(open.base+"/metrics"), chromedp.WaitVisible(chromedp.CSS(`body`)))
	if got := browsertest.Text(t, ctx, "body"); !strings.Contains(got, "# TYPE") {
		t.Errorf("/metrics in a browser: %.200q", got)
	}
}

// Every listener logs its address once it listens, so a daemon on :0 or
// behind a supervisor can be found; every daemon's last line says it
// stopped.
func TestListenersSayWhereAndDaemonsSayTheyStopped(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.mustRun(0, "run", "--once", "--regions", "US")
	for _, args := range [][]string{
		{"run", "--every", "1h", "--regions", "US", "--listen", "127.0.0.1:0"},
		{"serve", "--listen", "127.0.0.1:0"},
	} {
		p := h.start(args...)
		listening := regexp.MustCompile(`msg=(?:listening|serving) .*url=(http://127\.0\.0\.1:\d+/)`)
		var url string
		if !waitFor(cmdTimeout, func() bool {
			m := listening.FindStringSubmatch(p.out.String())
			if m != nil {
				url = m[1]
			}
			return m != nil || p.exited()
		}) || url == "" {
			t.Fatalf("ingest %s: no line with the address it listens on:\n%s", strings.Join(args, " "), p.out)
		}
		if !waitFor(cmdTimeout, func() bool { return siteServed(strings.TrimSuffix(url, "/")) }) {
			t.Fatalf("ingest %s: %s logged, but its site is not served there:\n%s", strings.Join(args, " "), url, p.out)
		}
		if args[0] == "run" {
			checkAlertSeries(t, url+"metrics")
		}
		p.signal(t, syscall.SIGTERM)
		if code, exited := p.wait(cmdTimeout); !exited || code != 0 {
			t.Fatalf("ingest %s after SIGTERM: want exit 0, got %d (exited %v):\n%s", strings.Join(args, " "), code, exited, p.out)
		}
		if last := lastLine(p.out.String()); !strings.Contains(last, "stopped") {
			t.Errorf("ingest %s: want its last line to say it stopped, got %q:\n%s", strings.Join(args, " "), last, p.out)
		}
	}
}

// TestEveryListenerServesOneSite: serve and run --listen serve one site.
// For each kind of listener (serve, serve --public, run --listen, run
// --listen --public, each with INGEST_UI_TOKEN on a non-loopback address),
// every route answers an anonymous caller, a wrong bearer token and the
// right one with the same status, and sends the RateLimit fields to the
// same callers, as one table says; and an anonymous client over its plan
// gets 429 on every listener whose readers' API is open to it.
func TestEveryListenerServesOneSite(t *testing.T) {
	t.Parallel()
	plans := filepath.Join(t.TempDir(), "plans.yaml")
	if err := os.WriteFile(plans, []byte("plans:\n  anonymous: {limit: 40, window: 1h, burst: 40}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	type cell struct {
		status  int
		metered bool // RateLimit and RateLimit-Policy sent
	}
	type row [3]cell // anonymous, a wrong token, the right token
	ok, metered, refused := cell{200, false}, cell{200, true}, cell{401, false}
	guarded := row{refused, refused, ok}
	open := row{ok, ok, ok}
	readersAPI := row{metered, refused, ok}
	tables := map[bool]map[string]row{
		false: { // with the token, not --public: every route but the probes and /metrics asks for it
			"/healthz": open, "/readyz": open, "/metrics": open, "/static/style.css": open,
			"/api/v1/charts/US": guarded, "/api/v1/search?q=a": guarded, "/api/v1/videos/none": {refused, refused, {404, false}},
			"/api/v1/quota": guarded, "/api/v1/runs": guarded, "/quota": guarded,
			"/": guarded, "/charts/US": guarded, "/worldwide": guarded, "/operator": guarded,
		},
		true: { // --public: the readers' routes anyone's, their API metered; the operator's behind the token
			"/healthz": open, "/readyz": open, "/metrics": guarded, "/static/style.css": open,
			"/api/v1/charts/US": readersAPI, "/api/v1/search?q=a": readersAPI,
			"/api/v1/videos/none": {{404, true}, refused, {404, false}},
			"/api/v1/quota":       guarded, "/api/v1/runs": guarded, "/quota": guarded,
			"/": open, "/charts/US": open, "/worldwide": open, "/operator": guarded,
		},
	}
	for _, tc := range []struct {
		name   string
		public bool
		args   []string
	}{
		{"serve", false, []string{"serve"}},
		{"serve --public", true, []string{"serve", "--public"}},
		{"run --listen", false, []string{"run", "--regions", "US"}},
		{"run --listen --public", true, []string{"run", "--regions", "US", "--public"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			d, _ := startListener(t, uiToken, append(tc.args, "--api-plans", plans, "--trusted-proxies", "127.0.0.0/8")...)
			// Each caller from an address of its own, so that no address
			// sends wrong tokens enough to be throttled.
			client := 0
			for path, want := range tables[tc.public] {
				for i, token := range []string{"", "wrong-token-Of-2026-that-no-one-has", uiToken} {
					client++
					code, hdr, body := getFrom(t, d.base+path, token, fmt.Sprintf("203.0.113.%d", client))
					got := cell{code, hdr.Get("RateLimit") != "" && hdr.Get("RateLimit-Policy") != ""}
					if got != want[i] {
						t.Errorf("%s as %s: got %d (RateLimit sent: %t), want %d (%t)\n%.200s",
							path, []string{"anonymous", "a wrong token", "the right token"}[i], got.status, got.metered, want[i].status, want[i].metered, body)
					}
				}
			}
			if !tc.public {
				return
			}
			for n := 1; ; n++ {
				code, hdr, _ := getFrom(t, d.base+"/api/v1/charts/US", "", "198.51.100.7")
				if code == 429 {
					if hdr.Get("Retry-After") == "" {
						t.Errorf("the 429 has no Retry-After")
					}
					break
				}
				if n > 45 {
					t.Fatalf("%d anonymous requests on a plan of 40 an hour: never refused (last %d)", n, code)
				}
			}
		})
	}
}

// getFrom fetches url with token as the bearer ("": none), as the client
// at addr behind a trusted proxy (X-Forwarded-For).
func getFrom(t *testing.T, url, token, addr string) (int, http.Header, []byte) {
	t.Helper()
	req, err := http.NewRequest("GET", url, nil)
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	req.Header.Set("X-Forwarded-For", addr)
	res, err := (&http.Client{Timeout: cmdTimeout, CheckRedirect: func(*http.Request, []*http.Request) error {
		return http.ErrUseLastResponse
	}}).Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, res.Header, b
}

// The listeners take IPv6 addresses: [::1]:PORT is loopback (the
// dashboard without a token), [::]:PORT every address (a token asked for).
func TestListenersTakeIPv6(t *testing.T) {
	t.Parallel()
	if ln, err := net.Listen("tcp", "[::1]:0"); err != nil {
		t.Skipf("no IPv6 loopback here: %v", err)
	} else {
		ln.Close()
	}
	h := newHarness(t)
	h.mustRun(0, "run", "--once", "--regions", "US")
	_, port, _ := net.SplitHostPort(closedAddr(t))
	p := h.start("serve", "--listen", "[::1]:"+port)
	base := "http://[::1]:" + port
	if !waitFor(30*time.Second, func() bool { return healthy(base+"/healthz") || p.exited() }) || p.exited() {
		t.Fatalf("serve --listen [::1]:%s never answered\n%s", port, p.out)
	}
	if code, _ := get(t, base+"/charts/US"); code != 200 {
		t.Errorf("/charts/US on [::1]: %d, want 200 (loopback, no token)", code)
	}
	res := h.mustRun(2, "serve", "--listen", "[::]:"+port)
	if !strings.Contains(res.stderr, "is not a loopback address") {
		t.Errorf("[::]:PORT without a token: want it refused as public\n%s", res)
	}
	// The daemon's listener is the same site on the same address syntax.
	_, port, _ = net.SplitHostPort(closedAddr(t))
	d := h.start("run", "--listen", "[::1]:"+port, "--regions", "US")
	base = "http://[::1]:" + port
	if !waitFor(30*time.Second, func() bool { return siteServed(base) || d.exited() }) || d.exited() {
		t.Fatalf("run --listen [::1]:%s never answered\n%s", port, d.out)
	}
	if code, _ := get(t, base+"/metrics"); code != 200 {
		t.Errorf("/metrics on the daemon's [::1]: %d, want 200", code)
	}
}

// TestListenerAnswersWhileTheStartWaits: the daemon's port answers from
// its start, whatever the upstream does: while the region catalogue's read
// is held at the upstream, /healthz answers 200, /metrics 200 with the
// process's series and the step the start waits on, /readyz 503 "starting"
// and the site's pages 503; once the read is answered and the plan made,
// /readyz runs its checks and /metrics is the daemon's.
func TestListenerAnswersWhileTheStartWaits(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	arrived, release := h.reqs.hold("/i18nRegions")
	defer release()
	listen := closedAddr(t)
	base := "http://" + listen
	// The start waits on the held read for as long as the test looks, not
	// --start-timeout's default.
	p := h.start("run", "--every", "1h", "--regions", "all", "--listen", listen, "--start-timeout", "1h")
	if !waitFor(cmdTimeout, func() bool { return isClosed(arrived) || p.exited() }) || p.exited() {
		t.Fatalf("the daemon never asked for the region catalogue\n%s", p.out)
	}
	if code, body := get(t, base+"/healthz"); code != 200 {
		t.Errorf("/healthz while the catalogue is held: %d %s, want 200", code, body)
	}
	code, body := get(t, base+"/readyz")
	if code != 503 || !strings.Contains(body, `"status": "starting"`) {
		t.Errorf("/readyz while the catalogue is held: %d %s, want 503 starting", code, body)
	}
	if code, body := get(t, base+"/api/v1/charts/US"); code != 503 {
		t.Errorf("/api/v1/charts/US while the catalogue is held: %d %s, want 503", code, body)
	}
	code, body = get(t, base+"/metrics")
	for _, want := range []string{`ingest_start_step_seconds{step="reading the region catalogue"}`, "ingest_start_seconds ",
		"ingest_build_info{", "process_start_time_seconds ", "go_goroutines "} {
		if code != 200 || !strings.Contains(body, want) {
			t.Errorf("/metrics while the catalogue is held: %d, want 200 with %s\n%.3000s", code, want, body)
		}
	}
	release()
	if !waitFor(longTimeout, func() bool { return siteServed(base) || p.exited() }) || p.exited() {
		t.Fatalf("the daemon never served its site once the catalogue was answered\n%s", p.out)
	}
	if code, body := get(t, base+"/readyz"); code != 200 || !strings.Contains(body, `"status": "ready"`) {
		t.Errorf("/readyz once started: %d %s, want 200 ready", code, body)
	}
	if code, body := get(t, base+"/metrics"); code != 200 || strings.Contains(body, "ingest_start_step_seconds") || !strings.Contains(body, "ingest_chart_cadence_seconds") {
		t.Errorf("/metrics once started: %d, want 200 with the daemon's series and not the start's\n%.3000s", code, body)
	}
	p.signal(t, syscall.SIGTERM)
	if code, exited := p.wait(cmdTimeout); !exited || code != 0 {
		t.Errorf("after SIGTERM: exit %d (exited %v), want 0\n%s", code, exited, p.out)
	}
}

// isClosed says whether c is closed.
func isClosed(c <-chan struct{}) bool {
	select {
	case <-c:
		return true
	default:
		return false
	}
}

// TestDaemonTellsSystemdWhenStarted: started as a Type=notify unit is
// (NOTIFY_SOCKET), the daemon says READY=1 once its start is done, never
// while it waits on the upstream, and its site is served by then.
func TestDaemonTellsSystemdWhenStarted(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	sock := filepath.Join(h.dir, "notify")
	notes, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: sock, Net: "unixgram"})
	if err != nil {
		t.Skipf("no unix datagram socket here: %v", err)
	}
	defer notes.Close()
	h.set("NOTIFY_SOCKET", sock)
	arrived, release := h.reqs.hold("/i18nRegions")
	defer release()
	listen := closedAddr(t)
	base := "http://" + listen
	// The start waits on the held read for as long as the test looks, not
	// --start-timeout's default.
	p := h.start("run", "--every", "1h", "--regions", "all", "--listen", listen, "--start-timeout", "1h")
	if !waitFor(cmdTimeout, func() bool { return isClosed(arrived) || p.exited() }) || p.exited() {
		t.Fatalf("the daemon never asked for the region catalogue\n%s", p.out)
	}
	buf := make([]byte, 256)
	if n := queued(t, notes, buf); n > 0 {
		t.Fatalf("the daemon told systemd %q while its start waited on the upstream\n%s", buf[:n], p.out)
	}
	release()
	notes.SetReadDeadline(time.Now().Add(longTimeout))
	n, err := notes.Read(buf)
	if err != nil || string(buf[:n]) != "READY=1" {
		t.Fatalf("systemd's socket: %q, %v; want READY=1 once started\n%s", buf[:n], err, p.out)
	}
	if !siteServed(base) {
		t.Errorf("READY=1 came before the site was served")
	}
	p.signal(t, syscall.SIGTERM)
	p.wait(cmdTimeout)
}

// queued reads a datagram c already holds into buf, waiting for none: its
// length, 0 when there is none.
func queued(t *testing.T, c *net.UnixConn, buf []byte) int {
	t.Helper()
	raw, err := c.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	raw.Read(func(fd uintptr) bool {
		if got, _, err := syscall.Recvfrom(int(fd), buf, syscall.MSG_DONTWAIT); err == nil {
			n = got
		}
		return true
	})
	return n
}

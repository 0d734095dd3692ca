package main

import (
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// hostileTitle is fakeyt's US title made of markup (internal/rig/fakeyt/world.go): the
// dashboard must show it as text.
const hostileTitle = `Prank <script>window.__xss=1</script> "><img src=x onerror="window.__xss=2"> reveal`

// uiToken is the access token the served dashboard asks for.
const uiToken = "ui-token-for-tests-Of-2026"

// dashboard is `ingest serve` over a database filled by two real
// `run --once --categories music` passes (US and GB, each the unfiltered
// chart and the music chart) against the fake upstream, so charts have a
// previous run to move against; the second tracks the videos' views.
type dashboard struct {
	h    *harness
	base string
	proc *proc
}

func startDashboard(t *testing.T) *dashboard {
	t.Helper()
	return startDashboardWith(t, "INGEST_DERIVED", "on") // movement, peak rank, days and trends, labelled as computed (docs/explanation/terms.md)
}

// startDashboardWith is startDashboard with the settings env names
// (name, value pairs) in place of the computed figures on.
func startDashboardWith(t *testing.T, env ...string) *dashboard {
	t.Helper()
	h := newHarness(t)
	h.mustRun(0, "run", "--once", "--regions", "US,GB", "--categories", "music")
	h.mustRun(0, "run", "--once", "--regions", "US,GB", "--categories", "music", "--track-for", "7d")
	addr := closedAddr(t)
	h.set("INGEST_UI_TOKEN", uiToken)
	for i := 0; i+1 < len(env); i += 2 {
		h.set(env[i], env[i+1])
	}
	plans := filepath.Join(h.dir, "plans.yaml")
	if err := os.WriteFile(plans, []byte(dashboardPlans), 0o644); err != nil {
		t.Fatal(err)
	}
	h.set("INGEST_API_PLANS", plans)
	p := h.startFor(longTimeout, "serve", "--listen", addr, "--regions", "US,GB") // the browser checks may outlast a command's bound on a busy machine
	d := &dashboard{h: h, base: "http://" + addr, proc: p}
	if !waitFor(30*time.Second, func() bool { code, _ := d.get(t, "/api/v1/runs", true); return code == 200 }) {
		t.Fatalf("ingest serve never answered on %s\n%s", addr, p.out)
	}
	return d
}

// dashboardPlans are the served API's plans: tiny is spent by one request.
const dashboardPlans = "plans:\n  standard: {limit: 10000, window: 1h}\n  tiny: {limit: 1, window: 1h}\n"

// get fetches path, with the bearer token when auth is true.
func (d *dashboard) get(t *testing.T, path string, auth bool) (int, []byte) {
	t.Helper()
	token := ""
	if auth {
		token = uiToken
	}
	code, _, body := d.getAs(t, path, token)
	return code, body
}

// getAs fetches path with token as the bearer ("": none).
func (d *dashboard) getAs(t *testing.T, path, token string) (int, http.Header, []byte) {
	t.Helper()
	req, err := http.NewRequest("GET", d.base+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	c := &http.Client{Timeout: 10 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error {
		return http.ErrUseLastResponse
	}}
	res, err := c.Do(req)
	if err != nil {
		return 0, nil, nil
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, res.Header, b
}

// hostileID is the id of the US video whose title is markup.
func (d *dashboard) hostileID(t *testing.T) string {
	t.Helper()
	_, body := d.get(t, "/api/v1/charts/US", true)
	var c struct {
		Entries []struct{ ID, Title string }
	}
	if err := json.Unmarshal(body, &c); err != nil {
		t.Fatalf("chart: %v\n%s", err, body)
	}
	for _, e := range c.Entries {
		if e.Title == hostileTitle {
			return e.ID
		}
	}
	t.Fatalf("the US chart has no video titled %q", hostileTitle)
	return ""
}

// saveShot writes a screenshot into the test's directory, and into
// $INGEST_SCREENSHOTS when it is set (to refresh docs/img/).
func saveShot(t *testing.T, dir, name string, png []byte) {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, png, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot %s (%d KB)", path, len(png)/1024)
	if out := os.Getenv("INGEST_SCREENSHOTS"); out != "" {
		if err := os.WriteFile(filepath.Join(out, name), png, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestRunListenServesTheDashboard: `ingest run --listen` serves the API and
// the dashboard beside /metrics and /healthz, from the daemon's database.
func TestRunListenServesTheDashboard(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.mustRun(0, "run", "--once", "--regions", "US")
	addr := closedAddr(t)
	p := h.start("run", "--every", "1h", "--regions", "US", "--listen", addr, "--no-thumbnails")
	d := &dashboard{h: h, base: "http://" + addr, proc: p}
	if !waitFor(30*time.Second, func() bool { return siteServed(d.base) }) {
		t.Fatalf("run --listen %s never answered\n%s", addr, p.out)
	}
	for _, path := range []string{"/metrics", "/api/v1/charts/US", "/api/v1/quota", "/", "/charts/US", "/static/style.css"} {
		if code, body := d.get(t, path, false); code != 200 {
			t.Errorf("run --listen %s: got %d\n%.300s", path, code, body)
		}
	}
	// --no-thumbnails: the chart loads nothing from YouTube's image host,
	// and the policy does not allow it.
	res, err := http.Get(d.base + "/charts/US")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if csp := res.Header.Get("Content-Security-Policy"); strings.Contains(csp, "ytimg") || strings.Contains(string(body), "<img") {
		t.Errorf("run --listen --no-thumbnails: policy %q, or an image on the chart page", csp)
	}
}

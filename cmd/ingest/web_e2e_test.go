package main

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/ingestworks/ingest/retention"
	"github.com/ingestworks/ingest/store"
)

// hostileTitle is fakeyt's US title made of markup (internal/fakeyt/world.go): the
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
	return startDashboardWith(t, "INGEST_DERIVED", "on") // movement, peak rank, days and trends, labelled as computed (docs/terms.md)
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
	p := h.start("serve", "--listen", addr, "--regions", "US,GB")
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

// signIn posts the sign-in form as a browser on the page would, and
// returns the session cookie it sets.
func (d *dashboard) signIn(t *testing.T) *http.Cookie {
	t.Helper()
	req, _ := http.NewRequest("POST", d.base+"/login", strings.NewReader(url.Values{"token": {uiToken}}.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Sec-Fetch-Site", "same-origin")
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	res, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	for _, ck := range res.Cookies() {
		if ck.Name == "ingest_session" && ck.Value != "" && ck.Value != uiToken {
			return ck
		}
	}
	t.Fatalf("sign-in: %d, no session cookie in %v", res.StatusCode, res.Cookies())
	return nil
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

// TestServeAPI checks the API's answers a script relies on: the token, the
// error shape, a 404 for a missing video, movement against the previous
// run, and that no secret is served.
func TestServeAPI(t *testing.T) {
	t.Parallel()
	d := startDashboard(t)
	if code, body := d.get(t, "/api/v1/quota", false); code != 401 || !strings.Contains(string(body), `"code": "unauthorized"`) {
		t.Errorf("no token: got %d %s, want 401 unauthorized", code, body)
	}
	if code, _ := d.get(t, "/", false); code != http.StatusUnauthorized {
		t.Errorf("a page asked for by a script with no token: got %d, want 401", code)
	}
	cases := []struct {
		path, param string
		status      int
	}{
		{"/api/v1/search?q=prank&limit=0", "limit", 400},
		{"/api/v1/search?q=", "q", 400},
		{"/api/v1/search?q=prank&region=USA", "region", 400},
		{"/api/v1/search?q=prank&cursor=zzz", "cursor", 400},
		{"/api/v1/charts/US?at=yesterday", "at", 400},
		{"/api/v1/charts/US?category=polka", "category", 400},
		{"/api/v1/charts/US?category=gaming", "", 404},
		{"/api/v1/runs?kind=daily", "kind", 400},
		{"/api/v1/videos/no-such-video", "", 404},
		{"/api/v1/charts/FR", "", 404},
	}
	for _, c := range cases {
		code, body := d.get(t, c.path, true)
		var e errorJSON
		if err := json.Unmarshal(body, &e); err != nil || code != c.status || e.Error.Status != c.status || e.Error.Parameter != c.param || e.Error.Message == "" {
			t.Errorf("%s: got %d %s, want %d naming %q", c.path, code, body, c.status, c.param)
		}
	}
	var chart struct {
		PrevRunID *int64 `json:"previous_run_id"`
		Entries   []struct {
			PrevRank  *int    `json:"previous_rank"`
			ViewTrend []int64 `json:"views_trend"`
		}
	}
	_, body := d.get(t, "/api/v1/charts/US", true)
	if err := json.Unmarshal(body, &chart); err != nil || chart.PrevRunID == nil || len(chart.Entries) == 0 ||
		chart.Entries[0].PrevRank == nil || len(chart.Entries[0].ViewTrend) != 2 {
		t.Errorf("US chart after two runs: want a previous run, ranks and two-point trends, got %s", body)
	}
	checkCategoryChart(t, d)
	var video struct {
		Regions []struct{ Region, Category string }
		Counts  []struct{ Views int64 } `json:"views_over_time"`
	}
	_, body = d.get(t, "/api/v1/videos/"+url.PathEscape(d.hostileID(t)), true)
	if err := json.Unmarshal(body, &video); err != nil || len(video.Counts) == 0 || len(video.Regions) == 0 {
		t.Errorf("video after two runs and tracking: want charts and views over time, got %.600s", body)
	}
	var quota struct {
		Hourly []struct {
			Pool  string
			Units []int64
		}
		Daily []struct {
			Pool  string
			Units []int64
		}
	}
	_, body = d.get(t, "/api/v1/quota", true)
	if err := json.Unmarshal(body, &quota); err != nil {
		t.Fatal(err)
	}
	sum := func(pool string, rows []struct {
		Pool  string
		Units []int64
	}) (n int64) {
		for _, r := range rows {
			for _, u := range r.Units {
				if r.Pool == pool {
					n += u
				}
			}
		}
		return n
	}
	// Every call of this test was made in the last minutes: the 24-hour
	// and the 30-day charts must both hold all of them.
	if h, dd := sum("default", quota.Hourly), sum("default", quota.Daily); h == 0 || h != dd {
		t.Errorf("quota: default pool's units %d by hour, %d by day; want the same, not zero", h, dd)
	}
	session := d.signIn(t)
	for _, path := range []string{"/api/v1/quota", "/", "/api/v1/runs"} {
		req, _ := http.NewRequest("GET", d.base+path, nil)
		req.AddCookie(session)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != 200 || strings.Contains(string(b), testKey) {
			t.Errorf("%s with the cookie: got %d; the API key must never be served", path, res.StatusCode)
		}
	}
}

// categoryChart is what the category test reads of a chart.
type categoryChart struct {
	Category  string `json:"category"`
	RunID     int64  `json:"run_id"`
	PrevRunID *int64 `json:"previous_run_id"`
	Entries   []struct {
		ID        string
		Category  string  `json:"category_id"`
		PrevRank  *int    `json:"previous_rank"`
		ViewTrend []int64 `json:"views_trend"`
	}
}

// checkCategoryChart: the music chart (by name or id) is its own chart,
// with its own runs and movement, and the unfiltered chart is not it.
func checkCategoryChart(t *testing.T, d *dashboard) {
	t.Helper()
	var all, music, byID categoryChart
	for path, c := range map[string]*categoryChart{"/api/v1/charts/US": &all, "/api/v1/charts/US?category=music": &music,
		"/api/v1/charts/us?category=10": &byID} {
		code, body := d.get(t, path, true)
		if err := json.Unmarshal(body, c); code != 200 || err != nil {
			t.Fatalf("%s: %d %v\n%s", path, code, err, body)
		}
	}
	if music.Category != "10" || byID.RunID != music.RunID || len(music.Entries) == 0 || music.PrevRunID == nil {
		t.Errorf("music chart: category %q run %d (by id %d), %d entries, previous run %v; want 10, the same run, entries and a previous run",
			music.Category, music.RunID, byID.RunID, len(music.Entries), music.PrevRunID)
	}
	if music.RunID == all.RunID || (all.PrevRunID != nil && music.PrevRunID != nil && *music.PrevRunID == *all.PrevRunID) {
		t.Errorf("the music chart's runs (%d, %v) are the unfiltered chart's (%d, %v)", music.RunID, music.PrevRunID, all.RunID, all.PrevRunID)
	}
	for _, e := range music.Entries {
		if e.Category != "10" || e.PrevRank == nil || len(e.ViewTrend) != 2 {
			t.Errorf("music chart entry %s: category %q, previous rank %v, trend %v; want 10, a rank in the previous music run, two points",
				e.ID, e.Category, e.PrevRank, e.ViewTrend)
			break
		}
	}
	var runs struct {
		Runs []struct {
			ID       int64
			Category string
		}
	}
	if _, body := d.get(t, "/api/v1/runs?region=US&kind=trending&limit=4", true); json.Unmarshal(body, &runs) != nil {
		t.Errorf("runs: %s", body)
	}
	found := false
	for _, r := range runs.Runs {
		if r.ID == music.RunID {
			found = true
			if r.Category != "10" {
				t.Errorf("runs: the music chart's run %d says category %q, want 10", r.ID, r.Category)
			}
		}
	}
	if !found {
		t.Errorf("runs: the US runs %+v do not list the music chart's run %d", runs.Runs, music.RunID)
	}
	others := 0
	for _, e := range all.Entries {
		if e.Category != "10" {
			others++
		}
	}
	if others == 0 {
		t.Errorf("the unfiltered US chart holds only music: it was read from the music chart's run")
	}
}

type errorJSON struct {
	Error struct {
		Status    int    `json:"status"`
		Code      string `json:"code"`
		Parameter string `json:"parameter"`
		Message   string `json:"message"`
	} `json:"error"`
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

// openAPI is what TestOpenAPIMatchesRoutes reads of docs/openapi.yaml.
type openAPI struct {
	Paths map[string]map[string]struct {
		Responses map[string]any `yaml:"responses"`
		Checks    []struct {
			Request string `yaml:"request"`
			Status  int    `yaml:"status"`
			Token   *bool  `yaml:"token"`
			As      string `yaml:"as"` // spent, client: an API token (see the file's description)
		} `yaml:"x-checks"`
	} `yaml:"paths"`
	Components struct {
		Schemas map[string]map[string]any `yaml:"schemas"`
	} `yaml:"components"`
}

// undocumented lists the fields of an answer (decoded JSON) its schema
// does not name, as paths (entries[].views_gained), where the schema
// names an object's properties.
func undocumented(schema map[string]any, v any, at string) []string {
	var out []string
	switch v := v.(type) {
	case map[string]any:
		props, ok := schema["properties"].(map[string]any)
		if !ok {
			return nil
		}
		for k, val := range v {
			sub, ok := props[k].(map[string]any)
			if !ok {
				out = append(out, at+k)
				continue
			}
			out = append(out, undocumented(sub, val, at+k+".")...)
		}
	case []any:
		items, _ := schema["items"].(map[string]any)
		for _, e := range v[:min(len(v), 1)] {
			out = append(out, undocumented(items, e, strings.TrimSuffix(at, ".")+"[].")...)
		}
	}
	return out
}

// TestOpenAPIMatchesRoutes sends every request docs/openapi.yaml lists to
// a real server: each route exists, answers every status the file
// documents, and errors have the documented shape.
func TestOpenAPIMatchesRoutes(t *testing.T) {
	t.Parallel()
	raw, err := os.ReadFile(filepath.Join("..", "..", "docs", "openapi.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var spec openAPI
	if err := yaml.Unmarshal(raw, &spec); err != nil {
		t.Fatalf("docs/openapi.yaml: %v", err)
	}
	if len(spec.Paths) == 0 {
		t.Fatal("docs/openapi.yaml: no paths")
	}
	d := startDashboard(t)
	video := d.hostileID(t)
	gone := d.goneID(t)
	tokens := map[string]string{
		"spent":  lastLine(d.h.mustRun(0, "tokens", "add", "spent", "--plan", "tiny").stdout),
		"client": lastLine(d.h.mustRun(0, "tokens", "add", "client", "--plan", "standard").stdout),
	}
	if code, _, body := d.getAs(t, "/api/v1/charts/US", tokens["spent"]); code != 200 {
		t.Fatalf("the tiny plan's one request: got %d\n%s", code, body)
	}
	for path, ops := range spec.Paths {
		route := regexp.MustCompile("^" + regexp.MustCompile(`\\\{[a-z]+\\\}`).ReplaceAllString(regexp.QuoteMeta(path), `[^/?]+`) + `(\?|$)`)
		for method, op := range ops {
			covered := map[int]bool{}
			for _, c := range op.Checks {
				req := strings.NewReplacer("{video}", url.PathEscape(video), "{gone}", gone).Replace(c.Request)
				if !route.MatchString(req) {
					t.Errorf("%s %s: x-check %s is not this route", method, path, c.Request)
				}
				token := tokens[c.As]
				if c.As == "" && (c.Token == nil || *c.Token) {
					token = uiToken
				}
				code, header, body := d.getAs(t, req, token)
				checkRateHeaders(t, method+" "+req, c.As != "", code, header)
				if code != c.Status {
					t.Errorf("%s %s: got %d, the file says %d\n%s", method, path, code, c.Status, body)
				}
				if _, ok := op.Responses[strconv.Itoa(code)]; !ok {
					t.Errorf("%s %s: answered %d, which the file does not document", method, path, code)
				}
				var e errorJSON
				if code >= 400 && (json.Unmarshal(body, &e) != nil || e.Error.Status != code || e.Error.Code == "") {
					t.Errorf("%s %s: error body is not the documented shape: %s", method, req, body)
				}
				// Every field of an answer is in its schema.
				if name := schemaOf(op.Responses[strconv.Itoa(code)]); code == 200 && spec.Components.Schemas[name] != nil {
					var v any
					if err := json.Unmarshal(body, &v); err != nil {
						t.Errorf("%s %s: %v", method, req, err)
					}
					if missing := undocumented(spec.Components.Schemas[name], v, ""); len(missing) > 0 {
						sort.Strings(missing)
						t.Errorf("%s %s: fields the schema %s does not name: %s", method, req, name, strings.Join(missing, ", "))
					}
				}
				covered[code] = true
			}
			for status := range op.Responses {
				if n, _ := strconv.Atoi(status); !covered[n] {
					t.Errorf("%s %s: documents %s but no x-check answers it", method, path, status)
				}
			}
		}
	}
}

// schemaOf is the name of the schema a response's JSON refers to.
func schemaOf(response any) string {
	b, _ := json.Marshal(response)
	m := regexp.MustCompile(`"#/components/schemas/([A-Za-z]+)"`).FindSubmatch(b)
	if m == nil {
		return ""
	}
	return string(m[1])
}

// goneID leaves in the dashboard's database the tombstone of a video
// the upstream stopped returning, as a refresh does, and returns its id.
func (d *dashboard) goneID(t *testing.T) string {
	t.Helper()
	db, err := store.Open(context.Background(), d.h.db())
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	const id = "gone-upstream-1"
	if _, err := retention.Gone(context.Background(), db, []string{id}, time.Now()); err != nil {
		t.Fatal(err)
	}
	return id
}

// checkRateHeaders checks the RateLimit fields of a metered answer (and
// their absence from the operator's), and Retry-After on a 429.
func checkRateHeaders(t *testing.T, what string, metered bool, code int, h http.Header) {
	t.Helper()
	policy := regexp.MustCompile(`^"[a-z]+";q=[0-9]+;w=[0-9]+$`)
	left := regexp.MustCompile(`^"[a-z]+";r=[0-9]+;t=[0-9]+$`)
	switch {
	case !metered && code != 401 && (h.Get("RateLimit") != "" || h.Get("RateLimit-Policy") != ""):
		t.Errorf("%s: the operator's request is metered: %q %q", what, h.Get("RateLimit-Policy"), h.Get("RateLimit"))
	case metered && code != 401 && (!policy.MatchString(h.Get("RateLimit-Policy")) || !left.MatchString(h.Get("RateLimit"))):
		t.Errorf("%s: RateLimit-Policy %q, RateLimit %q: want the draft-11 fields", what, h.Get("RateLimit-Policy"), h.Get("RateLimit"))
	}
	if n, err := strconv.Atoi(h.Get("Retry-After")); code == 429 && (err != nil || n < 1) {
		t.Errorf("%s: 429 with Retry-After %q, want whole seconds", what, h.Get("Retry-After"))
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
	if !waitFor(30*time.Second, func() bool { code, _ := d.get(t, "/healthz", false); return code == 200 }) {
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

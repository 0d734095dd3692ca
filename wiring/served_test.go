package wiring_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/clients"
	"github.com/ingestworks/ingest/clock"
	"github.com/ingestworks/ingest/costs"
	"github.com/ingestworks/ingest/internal/rig/passtest"
	"github.com/ingestworks/ingest/internal/rig/storetest"
	"github.com/ingestworks/ingest/jobs"
	"github.com/ingestworks/ingest/ratelimit"
	"github.com/ingestworks/ingest/retention"
	"github.com/ingestworks/ingest/store"
	"github.com/ingestworks/ingest/web"
	"github.com/ingestworks/ingest/wiring"
)

// hostileTitle is fakeyt's US title made of markup
// (internal/rig/fakeyt/world.go).
const hostileTitle = `Prank <script>window.__xss=1</script> "><img src=x onerror="window.__xss=2"> reveal`

// uiToken is the access token the served API asks for.
const uiToken = "ui-token-for-tests-Of-2026"

// servedPlans are the served API's plans: tiny is spent by one request.
const servedPlans = "plans:\n  standard: {limit: 10000, window: 1h}\n  tiny: {limit: 1, window: 1h}\n"

// served is the server serve builds (wiring.Host.OpenWeb) over a store
// the passes filled twice, US and GB, each the unfiltered chart and the
// music chart, so that charts have a previous run to move against, and
// tracking then read the videos' views, as run --once --track-for does; it
// listens on loopback with the access token, the computed figures on.
type served struct {
	db   *store.DB
	base string
	up   *passtest.Upstream
}

// clientSpent takes a call of op for client through the limiter and
// ledger as the proxy does before it sends one, so that the quota report
// shows the proxy's clients.
func (s *served) clientSpent(t *testing.T, client, op string) {
	t.Helper()
	if _, err := jobs.ClientGate(s.up.Limiter, passtest.QuotaKey, client)(context.Background(), op); err != nil {
		t.Fatal(err)
	}
}

func serve(t *testing.T) *served {
	t.Helper()
	ctx := context.Background()
	db := storetest.Open(t)
	up := passtest.New(t, db)
	for range 2 {
		up.Fill(t, "US", "US/10", "GB", "GB/10")
	}
	track := &jobs.Track{Clock: up.Clock, QuotaKey: passtest.QuotaKey, Costs: up.Costs, Limiter: up.Limiter, Source: up.Client, Store: db,
		Logger: slog.New(slog.DiscardHandler), For: 7 * 24 * time.Hour}
	if res := track.Run(ctx); res.Status != ingest.StatusCompleted || res.Tracked == 0 {
		t.Fatalf("tracking after the passes: %s, %d videos read: %v", res.Status, res.Tracked, res.Err)
	}
	plans, err := ratelimit.ParseAPIPlans("plans.yaml", []byte(servedPlans))
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewUnstartedServer(nil)
	standing := ingest.StandardStanding()
	standing.Derived = true
	h := &wiring.Host{Clock: clock.System, Costs: costs.Default(), Logger: slog.New(slog.DiscardHandler)}
	ui, closeFn, err := h.OpenWeb(ctx, wiring.On(db, ""), wiring.Serve{
		Schedule: wiring.Schedule{Timetable: jobs.Timetable{Every: time.Hour}, Regions: "US,GB", RegionsGiven: true},
		Plans:    plans, QuotaKey: passtest.QuotaKey, APIKey: passtest.Key, Standing: standing,
		Web: web.Config{Listen: srv.Listener.Addr().String(), Token: uiToken}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(closeFn)
	srv.Config.Handler = ui
	srv.Start()
	t.Cleanup(srv.Close)
	return &served{db: db, base: srv.URL, up: up}
}

// get fetches path, with the bearer token when auth is true.
func (s *served) get(t *testing.T, path string, auth bool) (int, []byte) {
	t.Helper()
	token := ""
	if auth {
		token = uiToken
	}
	code, _, body := s.getAs(t, path, token)
	return code, body
}

// getAs fetches path with token as the bearer ("": none).
func (s *served) getAs(t *testing.T, path, token string) (int, http.Header, []byte) {
	t.Helper()
	req, err := http.NewRequest("GET", s.base+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	res, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, res.Header, b
}

// signIn posts the sign-in form as a browser on the page would, and
// returns the session cookie it sets.
func (s *served) signIn(t *testing.T) *http.Cookie {
	t.Helper()
	req, _ := http.NewRequest("POST", s.base+"/login", strings.NewReader(url.Values{"token": {uiToken}}.Encode()))
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
func (s *served) hostileID(t *testing.T) string {
	t.Helper()
	_, body := s.get(t, "/api/v1/charts/US", true)
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

// goneID leaves in the store the tombstone of a video the upstream
// stopped returning, as a refresh does, and returns its id.
func (s *served) goneID(t *testing.T) string {
	t.Helper()
	const id = "gone-upstream-1"
	if _, err := retention.Gone(context.Background(), s.db, []string{id}, time.Now()); err != nil {
		t.Fatal(err)
	}
	return id
}

// token adds an API client's token on plan, as tokens add does.
func (s *served) token(t *testing.T, name, plan string) string {
	t.Helper()
	tok, err := clients.New(s.db).AddToken(context.Background(), name, plan, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

type errorJSON struct {
	Error struct {
		Status    int    `json:"status"`
		Code      string `json:"code"`
		Parameter string `json:"parameter"`
		Message   string `json:"message"`
	} `json:"error"`
}

package proxy_test

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"google.golang.org/api/googleapi"
	"google.golang.org/api/option"
	"google.golang.org/api/youtube/v3"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/clients"
	"github.com/ingestworks/ingest/costs"
	"github.com/ingestworks/ingest/internal/rig/clocktest"
	"github.com/ingestworks/ingest/internal/rig/fakeyt"
	"github.com/ingestworks/ingest/internal/rig/passtest"
	"github.com/ingestworks/ingest/internal/rig/storetest"
	"github.com/ingestworks/ingest/ledger"
	"github.com/ingestworks/ingest/proxy"
	"github.com/ingestworks/ingest/ratelimit"
)

// rig is the proxy in front of the fake upstream, on a store whose
// embedded limiter and ledger it spends on, with one client's token.
type rig struct {
	up     *passtest.Upstream
	url    string
	token  string
	ledger *ledger.Ledger
	tokens *clients.Clients
	// seen counts the outcomes Options.Observe was told, by outcome.
	seen map[string]int64
}

// newRig serves the proxy under costsYAML ("" for the built-in costs).
func newRig(t *testing.T, costsYAML string) *rig {
	t.Helper()
	return newRigWith(t, costsYAML, "")
}

// newRigWith is newRig with the tokens' plans of plansYAML ("": none), the
// client's token on plan team.
func newRigWith(t *testing.T, costsYAML, plansYAML string) *rig {
	t.Helper()
	return newRigAt(t, costsYAML, plansYAML, nil)
}

// newRigAt is newRigWith on clk, the limiter's, the ledger's and the
// proxy's (nil: the host's).
func newRigAt(t *testing.T, costsYAML, plansYAML string, clk ingest.Clock) *rig {
	t.Helper()
	db := storetest.Open(t)
	c := costs.Default()
	if costsYAML != "" {
		var err error
		if c, err = costs.Parse("costs.yaml", []byte(costsYAML)); err != nil {
			t.Fatal(err)
		}
	}
	up := passtest.NewWith(t, db, passtest.Options{Costs: c, Clock: clk})
	up.Fake.AllowKeys(passtest.Key)
	cl := clients.New(db)
	tok, err := cl.AddToken(context.Background(), "ann", "team", up.Clock.Now())
	if err != nil {
		t.Fatal(err)
	}
	r := &rig{up: up, token: tok, ledger: ledger.New(db), tokens: cl, seen: map[string]int64{}}
	opts := proxy.Options{
		Logger:  slog.New(slog.DiscardHandler),
		Observe: func(_, outcome string, _ int64) { r.seen[outcome]++ },
	}
	if plansYAML != "" {
		if opts.Plans, err = ratelimit.ParseAPIPlans("plans.yaml", []byte(plansYAML)); err != nil {
			t.Fatal(err)
		}
		opts.Books, opts.State = r.ledger, up.Limiter.State
	}
	p := proxy.New(up.Limiter, passtest.QuotaKey, c, up.Client, cl, up.Clock, opts)
	srv := httptest.NewServer(p)
	t.Cleanup(srv.Close)
	r.url = srv.URL
	return r
}

// addToken is a token of another client, name, on plan.
func (r *rig) addToken(t *testing.T, name, plan string) string {
	t.Helper()
	tok, err := r.tokens.AddToken(context.Background(), name, plan, r.up.Clock.Now())
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// service is the official Go client pointed at the proxy with token.
func (r *rig) service(t *testing.T, token string) *youtube.Service {
	t.Helper()
	svc, err := youtube.NewService(context.Background(), option.WithEndpoint(r.url+"/"), option.WithAPIKey(token))
	if err != nil {
		t.Fatal(err)
	}
	return svc
}

// ledgerUnits is every unit the ledger holds, all pools, given-back calls
// left out, and whether each call names ann.
func (r *rig) ledgerUnits(t *testing.T) int64 {
	t.Helper()
	calls, err := r.ledger.Calls(context.Background(), passtest.QuotaKey, r.up.Clock.Now().AddDate(0, 0, -2))
	if err != nil {
		t.Fatal(err)
	}
	var n int64
	for _, c := range calls {
		if c.Client != "ann" {
			t.Errorf("ledger call %s %s has client %q, want ann", c.Op, c.ID, c.Client)
		}
		for _, ch := range c.Charges {
			n += ch.Units
		}
	}
	return n
}

func apiError(t *testing.T, err error) *googleapi.Error {
	t.Helper()
	var ge *googleapi.Error
	if !errors.As(err, &ge) {
		t.Fatalf("err = %v (%T), want a *googleapi.Error", err, err)
	}
	return ge
}

func reason(ge *googleapi.Error) string {
	if len(ge.Errors) == 0 {
		return ""
	}
	return ge.Errors[0].Reason
}

// everyOperation prices the operations the tests call at the upstream's
// own costs, after the pools a test sizes.
const everyOperation = `operations:
  videos.list:          {default: 1}
  videoCategories.list: {default: 1}
  i18nRegions.list:     {default: 1}
  search.list:          {search: 1}
  videos.batchGetStats: {stats: 1}
`

const daySearch = `
pools:
  default: {limit: 10000, reserve: 0, window: 24h, day: America/Los_Angeles}
  search:  {limit: 2, reserve: 0, window: 24h, day: America/Los_Angeles}
  stats:   {limit: 10000, reserve: 0, window: 24h, day: America/Los_Angeles}
` + everyOperation

// The official Go client, given the proxy's address and a token in place
// of the key, makes its calls; once the day's pool is spent the next is
// never sent and is the client's usual quota error; the upstream charged
// what the ledger holds, to the unit, each call with its client.
func TestGoClientSpendsThroughTheProxyAndMeetsTheQuotaError(t *testing.T) {
	r := newRig(t, daySearch)
	svc := r.service(t, r.token)
	ctx := context.Background()
	res, err := svc.Videos.List([]string{"snippet"}).Chart("mostPopular").RegionCode("US").MaxResults(5).Context(ctx).Do()
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Items) == 0 {
		t.Fatal("videos.list through the proxy: no videos")
	}
	for range 2 {
		if _, err := svc.Search.List([]string{"id"}).Q("music").RegionCode("US").Context(ctx).Do(); err != nil {
			t.Fatal(err)
		}
	}
	sent := r.up.Fake.Requests()
	_, err = svc.Search.List([]string{"id"}).Q("music").RegionCode("US").Context(ctx).Do()
	ge := apiError(t, err)
	if ge.Code != http.StatusForbidden || reason(ge) != "quotaExceeded" {
		t.Errorf("the call past the pool: HTTP %d %q, want 403 quotaExceeded", ge.Code, reason(ge))
	}
	if !strings.Contains(ge.Message, "pool search") || ge.Header.Get("Retry-After") == "" || ge.Header.Get("RateLimit") == "" {
		t.Errorf("the refusal says %q with Retry-After %q and RateLimit %q: want the pool named and both fields",
			ge.Message, ge.Header.Get("Retry-After"), ge.Header.Get("RateLimit"))
	}
	if got := r.up.Fake.Requests(); got != sent {
		t.Errorf("the refused call reached the upstream: %d requests, want %d", got, sent)
	}
	if charged, led := r.up.Fake.Charged(passtest.Key), r.ledgerUnits(t); charged != led || charged != 3 {
		t.Errorf("the upstream charged %d units, the ledger holds %d: want 3 each", charged, led)
	}
	if n := len(r.up.Fake.ChargedByOp(r.token)); n != 0 {
		t.Errorf("the client's token reached the upstream as a key (%d operations charged to it)", n)
	}
	if r.seen[proxy.OutcomeForwarded] != 3 || r.seen[proxy.OutcomeRefused] != 1 {
		t.Errorf("outcomes observed %v, want 3 forwarded and 1 refused", r.seen)
	}
}

const hourDefault = `
pools:
  default: {limit: 1, reserve: 0, window: 1h}
  search:  {limit: 100, reserve: 0, window: 24h, day: America/Los_Angeles}
  stats:   {limit: 10000, reserve: 0, window: 24h, day: America/Los_Angeles}
` + everyOperation

// awayFromTheReset is a clock half a day from the upstream's reset, for a
// test whose short pool must free before the reset whatever the host's hour.
func awayFromTheReset() *clocktest.Fake {
	reset := ingest.UpstreamReset(time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC))
	return clocktest.NewFake(reset.Add(-12 * time.Hour))
}

// A pool that frees before the upstream's reset refuses with 429
// rateLimitExceeded, which the clients retry later.
func TestARefusalThatFreesSoonIsARateLimit(t *testing.T) {
	r := newRigAt(t, hourDefault, "", awayFromTheReset())
	svc := r.service(t, r.token)
	if _, err := svc.I18nRegions.List([]string{"snippet"}).Do(); err != nil {
		t.Fatal(err)
	}
	_, err := svc.I18nRegions.List([]string{"snippet"}).Do()
	ge := apiError(t, err)
	if ge.Code != http.StatusTooManyRequests || reason(ge) != "rateLimitExceeded" || ge.Errors[0].Message == "" {
		t.Errorf("the call past the hour's pool: HTTP %d %+v, want 429 rateLimitExceeded with a message", ge.Code, ge.Errors)
	}
	if ra := ge.Header.Get("Retry-After"); ra == "" || ra == "0" {
		t.Errorf("Retry-After %q, want the seconds until the pool frees", ra)
	}
}

// The upstream's own spent quota is handed to the client as it came, and
// blocks the pool for every worker: the next call is refused unsent.
func TestTheUpstreamsSpentQuotaBlocksThePool(t *testing.T) {
	r := newRig(t, "")
	svc := r.service(t, r.token)
	r.up.Fake.ExhaustQuota(fakeyt.QuotaExceeded)
	_, err := svc.Videos.List([]string{"id"}).Chart("mostPopular").RegionCode("US").Do()
	if ge := apiError(t, err); ge.Code != http.StatusForbidden || reason(ge) != "quotaExceeded" {
		t.Fatalf("the upstream's refusal: HTTP %d %q, want 403 quotaExceeded", ge.Code, reason(ge))
	}
	r.up.Fake.ClearFaults()
	sent := r.up.Fake.Requests()
	_, err = svc.Videos.List([]string{"id"}).Chart("mostPopular").RegionCode("US").Do()
	if ge := apiError(t, err); ge.Code != http.StatusForbidden || reason(ge) != "quotaExceeded" {
		t.Errorf("the call after the block: HTTP %d %q, want 403 quotaExceeded", ge.Code, reason(ge))
	}
	if got := r.up.Fake.Requests(); got != sent {
		t.Errorf("a call reached the upstream after it said its quota was spent: %d requests, want %d", got, sent)
	}
	if charged, led := r.up.Fake.Charged(passtest.Key), r.ledgerUnits(t); charged != led {
		t.Errorf("the upstream charged %d units, the ledger holds %d", charged, led)
	}
}

// What the proxy does not forward: a request without a token, with an
// unknown one, an operation no costs file prices, a method the registry
// does not call; none reaches the upstream, none is charged.
func TestTheProxyForwardsOnlyPricedCallsOfItsClients(t *testing.T) {
	r := newRig(t, "")
	for _, c := range []struct {
		name, method, path string
		code               int
		reason             string
	}{
		{"no token", "GET", "/youtube/v3/videos?part=id&chart=mostPopular", 403, "forbidden"},
		{"unknown token", "GET", "/youtube/v3/videos?part=id&chart=mostPopular&key=ingest_nobody", 400, "keyInvalid"},
		{"unpriced operation", "GET", "/youtube/v3/channels?part=id&id=x&key=" + r.token, 403, "forbidden"},
		{"a write", "POST", "/youtube/v3/videos?part=id&key=" + r.token, 403, "forbidden"},
		{"another host", "GET", "/http://example.com/youtube/v3/videos?key=" + r.token, 404, "notFound"},
	} {
		t.Run(c.name, func(t *testing.T) {
			req, _ := http.NewRequest(c.method, r.url+c.path, nil)
			res, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			err = googleapi.CheckResponse(res)
			res.Body.Close()
			if ge := apiError(t, err); ge.Code != c.code || reason(ge) != c.reason {
				t.Errorf("HTTP %d %q, want %d %q", ge.Code, reason(ge), c.code, c.reason)
			}
		})
	}
	if n := r.up.Fake.Requests() + r.up.Fake.Keyless(); n != 0 {
		t.Errorf("%d requests reached the upstream, want none", n)
	}
	if led := r.ledgerUnits(t); led != 0 {
		t.Errorf("the ledger holds %d units, want none", led)
	}
}

package web

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ingestworks/ingest/clock"
	"github.com/ingestworks/ingest/internal/rig/clocktest"
	"github.com/ingestworks/ingest/ratelimit"
	"github.com/ingestworks/ingest/web/throttle"
)

type downLimiter struct{ calls int }

func (d *downLimiter) Allow(context.Context, ratelimit.APIPlan, string, int64) (ratelimit.Result, error) {
	d.calls++
	return ratelimit.Result{}, errors.New("limiter: unavailable")
}

type noTokens struct{}

// anyMeter meters clients on the built-in plans in memory: what a --public
// listener needs, for a test about something else.
func anyMeter() *throttle.Meter {
	return &throttle.Meter{Plans: ratelimit.DefaultAPIPlans(), Limiter: ratelimit.NewMemory(), Tokens: noTokens{}}
}

func (noTokens) TokenPlan(context.Context, string) (string, bool, error) { return "", false, nil }
func (noTokens) TokenUsed(context.Context, string, time.Time) error      { return nil }

// TestMeterFailsOpenAndSparesTheOperator: a limiter that cannot decide
// serves the request (never a 500), counted as unmetered; the holder of
// the UI token is never metered.
func TestMeterFailsOpenAndSparesTheOperator(t *testing.T) {
	t.Parallel()
	l := &downLimiter{}
	var outcomes []string
	m := &throttle.Meter{Plans: ratelimit.DefaultAPIPlans(), Limiter: l, Tokens: noTokens{},
		Observe: func(plan, outcome string) { outcomes = append(outcomes, plan+" "+outcome) }}
	nf := Route{Pattern: "GET /api/v1/x", Kind: API, Handler: http.HandlerFunc(healthz)}
	s, err := New(Config{Clock: clock.System, Listen: "127.0.0.1:8080", Meter: m, Routes: []Route{nf}})
	if err != nil {
		t.Fatal(err)
	}
	rec := httptest.NewRecorder()
	s.ServeHTTP(rec, httptest.NewRequest("GET", "/api/v1/x", nil))
	if rec.Code != 200 || rec.Header().Get("RateLimit-Policy") != `"anonymous";q=600;w=3600` || rec.Header().Get("RateLimit") != "" {
		t.Fatalf("limiter down: got %d %v, want 200 with the policy and no RateLimit", rec.Code, rec.Header())
	}
	if len(outcomes) != 1 || outcomes[0] != "anonymous unmetered" {
		t.Errorf("observed %v, want [anonymous unmetered]", outcomes)
	}
	op, err := New(Config{Clock: clock.System, Listen: "127.0.0.1:8080", Token: "op", Meter: m, Routes: []Route{nf}})
	if err != nil {
		t.Fatal(err)
	}
	req := httptest.NewRequest("GET", "/api/v1/x", nil)
	req.Header.Set("Authorization", "Bearer op")
	rec = httptest.NewRecorder()
	op.ServeHTTP(rec, req)
	if rec.Code != 200 || l.calls != 1 || rec.Header().Get("RateLimit-Policy") != "" {
		t.Fatalf("operator: got %d, %d limiter calls, policy %q; want 200 unmetered", rec.Code, l.calls, rec.Header().Get("RateLimit-Policy"))
	}
	rec = httptest.NewRecorder()
	op.ServeHTTP(rec, httptest.NewRequest("GET", "/api/v1/x", nil))
	if rec.Code != 401 {
		t.Fatalf("no token on a server with one: got %d, want 401 (not anonymous)", rec.Code)
	}
}

// TestMeterHeaders: the RateLimit fields count a plan's burst down, t is
// the seconds until the same cost fits, and a refusal is a 429 whose
// Retry-After is that same figure.
func TestMeterHeaders(t *testing.T) {
	t.Parallel()
	plans, err := ratelimit.ParseAPIPlans("plans.yaml", []byte("plans:\n  anonymous: {limit: 3, window: 1m, burst: 2}\n"))
	if err != nil {
		t.Fatal(err)
	}
	m := &throttle.Meter{Plans: plans, Limiter: ratelimit.NewMemory(), Tokens: noTokens{}}
	nf := Route{Pattern: "GET /api/v1/x", Kind: API, Handler: http.HandlerFunc(healthz)}
	s, err := New(Config{Clock: clock.System, Listen: "127.0.0.1:8080", Meter: m, Routes: []Route{nf}})
	if err != nil {
		t.Fatal(err)
	}
	// A unit comes back every 1m/(3-2+1) = 30 s.
	for i, want := range []struct {
		code             int
		rateLimit, retry string
	}{
		{200, `"anonymous";r=1;t=0`, ""},
		{200, `"anonymous";r=0;t=30`, ""},
		{429, `"anonymous";r=0;t=30`, "30"},
	} {
		rec := httptest.NewRecorder()
		s.ServeHTTP(rec, httptest.NewRequest("GET", "/api/v1/x", nil))
		h := rec.Header()
		if rec.Code != want.code || h.Get("RateLimit") != want.rateLimit || h.Get("Retry-After") != want.retry || h.Get("RateLimit-Policy") != `"anonymous";q=3;w=60` {
			t.Fatalf("request %d: got %d %q %q %q, want %d %q Retry-After %q", i+1, rec.Code, h.Get("RateLimit-Policy"), h.Get("RateLimit"), h.Get("Retry-After"), want.code, want.rateLimit, want.retry)
		}
	}
}

// countingLimiter counts the decisions a limiter is asked for.
type countingLimiter struct {
	ratelimit.Limiter
	calls atomic.Int64
}

func (c *countingLimiter) Allow(ctx context.Context, plan ratelimit.APIPlan, client string, cost int64) (ratelimit.Result, error) {
	c.calls.Add(1)
	return c.Limiter.Allow(ctx, plan, client, cost)
}

// TestLeasedAnonymousBudgetKeepsThePlan: two processes sharing one
// limiter, each taking an anonymous client's budget in blocks, admit no
// more than the plan's limit together, lose at most a block each to
// leases left unused, and ask the limiter far less often than once a
// request.
func TestLeasedAnonymousBudgetKeepsThePlan(t *testing.T) {
	t.Parallel()
	plans, err := ratelimit.ParseAPIPlans("plans.yaml", []byte("plans:\n  anonymous: {limit: 100, window: 1h, burst: 100}\n"))
	if err != nil {
		t.Fatal(err)
	}
	shared := &countingLimiter{Limiter: ratelimit.NewMemory()}
	const block = 8
	route := Route{Pattern: "GET /api/v1/x", Kind: API, Audience: Reader, Handler: http.HandlerFunc(healthz)}
	var servers []*Server
	for range 2 {
		s, err := New(Config{Clock: clock.System, Listen: "127.0.0.1:8080", Routes: []Route{route},
			Meter: &throttle.Meter{Plans: plans, Limiter: shared, Tokens: noTokens{}, Lease: block}})
		if err != nil {
			t.Fatal(err)
		}
		servers = append(servers, s)
	}
	admitted, callsBefore := 0, int64(-1)
	for i := range 300 {
		rec := httptest.NewRecorder()
		servers[i%2].ServeHTTP(rec, httptest.NewRequest("GET", "/api/v1/x", nil))
		switch rec.Code {
		case 200:
			admitted++
		case 429:
			if callsBefore < 0 {
				callsBefore = shared.calls.Load()
			}
		default:
			t.Fatalf("request %d: got %d", i+1, rec.Code)
		}
	}
	if admitted > 100 || admitted < 100-2*(block-1) {
		t.Errorf("two processes admitted %d of a plan of 100, want at most 100 and at least %d", admitted, 100-2*(block-1))
	}
	if want := int64(100/block + 2*block); callsBefore > want { // the blocks, then the last few units one by one
		t.Errorf("the plan's first %d requests asked the limiter %d times, want at most %d with blocks of %d", admitted, callsBefore, want, block)
	}
}

// lateLimiter answers after its bound: the error a client's deadline
// gives.
type lateLimiter struct{}

func (lateLimiter) Allow(context.Context, ratelimit.APIPlan, string, int64) (ratelimit.Result, error) {
	return ratelimit.Result{}, fmt.Errorf("api limiter: %w", context.DeadlineExceeded)
}

// TestMeterUndecidedIsCountedAndToldOnceAMinute: a request the limiter did
// not decide in time is served, counted as unmetered each time, and said
// in the log at most once a minute of the server's clock.
func TestMeterUndecidedIsCountedAndToldOnceAMinute(t *testing.T) {
	t.Parallel()
	clk := clocktest.NewFake(time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC))
	var log bytes.Buffer
	unmetered := 0
	m := &throttle.Meter{Plans: ratelimit.DefaultAPIPlans(), Limiter: lateLimiter{}, Tokens: noTokens{},
		Observe: func(plan, outcome string) {
			if outcome == "unmetered" {
				unmetered++
			}
		}}
	nf := Route{Pattern: "GET /api/v1/x", Kind: API, Handler: http.HandlerFunc(healthz)}
	s, err := New(Config{Listen: "127.0.0.1:8080", Meter: m, Routes: []Route{nf}, Clock: clk,
		Logger: slog.New(slog.NewTextHandler(&log, nil))})
	if err != nil {
		t.Fatal(err)
	}
	told := func() int { return strings.Count(log.String(), "the limiter cannot decide") }
	for i, step := range []struct {
		after time.Duration
		told  int
	}{{0, 1}, {time.Second, 1}, {58 * time.Second, 1}, {time.Second, 2}, {30 * time.Second, 2}, {30 * time.Second, 3}} {
		clk.Advance(step.after)
		rec := httptest.NewRecorder()
		s.ServeHTTP(rec, httptest.NewRequest("GET", "/api/v1/x", nil))
		if rec.Code != 200 {
			t.Fatalf("request %d: got %d, want 200 (served unmetered)", i+1, rec.Code)
		}
		if unmetered != i+1 || told() != step.told {
			t.Fatalf("request %d, %s later: counted %d unmetered, told %d times; want %d and %d\n%s",
				i+1, step.after, unmetered, told(), i+1, step.told, log.String())
		}
	}
	if !strings.Contains(log.String(), "deadline exceeded") {
		t.Errorf("the line does not say why the limiter did not decide:\n%s", log.String())
	}
}

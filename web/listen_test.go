package web

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/report"
)

// /quota is the report's JSON as ingest report --json prints it, with
// nothing escaped for HTML; a report that cannot be built is 500 with
// the error.
func TestQuotaReport(t *testing.T) {
	t.Parallel()
	ok := QuotaReport(func(context.Context) (*report.Report, error) {
		return &report.Report{QuotaKey: "<k>&"}, nil
	})
	w := httptest.NewRecorder()
	ok.ServeHTTP(w, httptest.NewRequest("GET", "/quota", nil))
	if w.Code != http.StatusOK || w.Header().Get("Content-Type") != "application/json" {
		t.Fatalf("code %d, type %q", w.Code, w.Header().Get("Content-Type"))
	}
	if !strings.Contains(w.Body.String(), `"<k>&"`) {
		t.Errorf("body escapes the key: %s", w.Body.String())
	}
	var j report.JSON
	if err := json.Unmarshal(w.Body.Bytes(), &j); err != nil || j.QuotaKey != "<k>&" {
		t.Errorf("body %s: %v", w.Body.String(), err)
	}
	bad := QuotaReport(func(context.Context) (*report.Report, error) { return nil, errors.New("no ledger") })
	w = httptest.NewRecorder()
	bad.ServeHTTP(w, httptest.NewRequest("GET", "/quota", nil))
	if w.Code != http.StatusInternalServerError || !strings.Contains(w.Body.String(), `"error": "no ledger"`) {
		t.Errorf("code %d, body %s", w.Code, w.Body.String())
	}
}

// Start serves until the func it returns shuts the server down.
func TestStart(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	stop := Start(context.Background(), ln, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		io.WriteString(w, "hi")
	}), slog.New(slog.DiscardHandler))
	url := "http://" + ln.Addr().String() + "/"
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(body) != "hi" {
		t.Errorf("body %q", body)
	}
	stop()
	if resp, err := http.Get(url); err == nil {
		resp.Body.Close()
		t.Error("the server still answers after shutdown")
	}
}

type pools struct{ err error }

func (p pools) State(context.Context) ([]ingest.PoolState, error) { return nil, p.err }
func (pools) Backend() string                                     { return "redis" }

func TestLimiterCheck(t *testing.T) {
	t.Parallel()
	c := LimiterCheck(pools{})
	if c.Name != "limiter" || c.Passed != "redis answers" || c.Probe(context.Background()) != nil {
		t.Errorf("check %+v", c)
	}
	down := errors.New("dial tcp: connection refused")
	if err := LimiterCheck(pools{down}).Probe(context.Background()); !errors.Is(err, down) {
		t.Errorf("probe of a limiter that does not answer: %v", err)
	}
}

// TestListenOnAPortHeldIsAConfigurationError: a port another process
// holds is a setting to change, named with the way to find the holder.
func TestListenOnAPortHeldIsAConfigurationError(t *testing.T) {
	t.Parallel()
	held, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	_, err = Listen(held.Addr().String())
	var ce *ingest.ConfigError
	if !errors.As(err, &ce) || !strings.Contains(err.Error(), "address already in use") || !strings.Contains(err.Error(), "ss -ltnp") {
		t.Errorf("Listen on a port held: %v, want a configuration error naming it held", err)
	}
}

// TestServeAnswersUntilItsContextEnds: Serve answers on its address until
// its context ends, then returns with the requests in flight answered.
func TestServeAnswersUntilItsContextEnds(t *testing.T) {
	t.Parallel()
	free, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := free.Addr().String()
	free.Close()
	ctx, cancel := context.WithCancel(context.Background())
	arrived, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	ui := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		once.Do(func() { close(arrived) })
		<-release
		io.WriteString(w, "answered")
	})
	served := make(chan error, 1)
	go func() { served <- Serve(ctx, addr, ui, slog.New(slog.DiscardHandler)) }()
	got := make(chan string, 1)
	go func() {
		for {
			resp, err := http.Get("http://" + addr + "/")
			if err != nil { // not listening yet, or never: Serve said why
				select {
				case err := <-served:
					t.Errorf("Serve ended before it answered: %v", err)
					served <- err
					once.Do(func() { close(arrived) })
					got <- ""
					return
				case <-time.After(10 * time.Millisecond):
				}
				continue
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			got <- string(b)
			return
		}
	}()
	<-arrived
	cancel()
	select { // a Serve that returned now would have dropped the request in flight
	case err := <-served:
		t.Errorf("Serve returned (%v) with a request in flight", err)
		served <- nil
	case <-time.After(50 * time.Millisecond):
	}
	close(release)
	if body := <-got; body != "answered" {
		t.Errorf("the request in flight at the end got %q, want it answered", body)
	}
	if err := <-served; err != nil {
		t.Errorf("Serve = %v, want nil once its context ended", err)
	}
}

// /quota says the tier the plan cannot hold at its cadence, and by how
// much, as `report --json` does; a tier held at its cadence, nothing.
func TestQuotaSaysTheTierThePoolCannotHold(t *testing.T) {
	t.Parallel()
	h := QuotaReport(func(context.Context) (*report.Report, error) {
		return &report.Report{Tiers: []report.TierLine{
			{Tier: 1, Regions: 8, Every: 2 * time.Hour, Slowest: 2 * time.Hour, Cadence: time.Hour, Units: 384},
			{Tier: 3, Regions: 4, Every: 3 * time.Hour, Slowest: 3 * time.Hour, Cadence: 3 * time.Hour, Units: 32}}}, nil
	})
	w := httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest("GET", "/quota", nil))
	var j report.JSON
	if err := json.Unmarshal(w.Body.Bytes(), &j); err != nil {
		t.Fatalf("body %s: %v", w.Body.String(), err)
	}
	if len(j.Tiers) != 2 || j.Tiers[0].Stretch != 2 || !strings.Contains(j.Tiers[0].Unheld, "the pool cannot hold tier 1 at its cadence (1h)") ||
		j.Tiers[1].Unheld != "" || !strings.Contains(w.Body.String(), `"times_its_cadence": 2`) {
		t.Errorf("/quota's tiers: %s", w.Body.String())
	}
}

package web

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
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

package wiring_test

import (
	"testing"

	"github.com/ingestworks/ingest/clock"
	"github.com/ingestworks/ingest/costs"
	"github.com/ingestworks/ingest/report"
	"github.com/ingestworks/ingest/wiring"
)

// With neither a database nor Redis, nothing was spent on this host: the
// limiter read is the pools whole.
func TestReadLimiterWithNothingIsWhole(t *testing.T) {
	h := &wiring.Host{Clock: clock.System, Costs: costs.Default()}
	l, closeFn, err := h.ReadLimiter(nil, "-", h.Costs)
	if err != nil {
		t.Fatal(err)
	}
	defer closeFn()
	if _, ok := l.(report.WholePools); !ok {
		t.Errorf("got %T, want report.WholePools", l)
	}
}

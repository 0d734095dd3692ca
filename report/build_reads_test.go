package report_test

import (
	"context"
	"testing"
	"time"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/costs"
	"github.com/ingestworks/ingest/jobs"
	"github.com/ingestworks/ingest/regions"
	"github.com/ingestworks/ingest/report"
)

// callsCounter counts the reads of the ledger's calls alone.
type callsCounter struct {
	report.NoDB
	calls []ingest.Call
	reads int
}

func (s *callsCounter) Calls(_ context.Context, _ string, since time.Time) ([]ingest.Call, error) {
	s.reads++
	var out []ingest.Call
	for _, c := range s.calls {
		if !c.At.Before(since) {
			out = append(out, c)
		}
	}
	return out, nil
}

// A report reads the ledger's calls once, however many of its parts (the
// pools' breakdowns, the plan it computes when no daemon published one)
// use them: they are the report's largest read, as many rows as the
// calls the window holds.
func TestReportReadsTheCallsOnce(t *testing.T) {
	ctx := context.Background()
	now := time.Now()
	c := costs.Default()
	s := &callsCounter{}
	for i := range 50 {
		s.calls = append(s.calls, ingest.Call{QuotaKey: "k", ID: "c" + string(rune('a'+i%26)) + string(rune('a'+i/26)),
			At: now.Add(-time.Duration(i) * 10 * time.Minute), Op: ingest.OpVideosList, Region: "US",
			Charges: []ingest.Charge{{Pool: "default", Units: 1}}})
	}
	src := report.Sources{DB: s, Limiter: report.WholePools{Costs: c}, Costs: c, QuotaKey: "k", Now: now, NewPacer: newPacer,
		Timetable: jobs.Timetable{Charts: []regions.Chart{{Code: "US", Tier: 1, Depth: 200}, {Code: "GB", Tier: 1, Depth: 200}}, Every: time.Hour}}
	r, err := report.Build(ctx, src)
	if err != nil {
		t.Fatal(err)
	}
	if r.Freshness == nil {
		t.Fatal("the report computed no plan: the test does not reach the plan's read of the ledger")
	}
	if s.reads != 1 {
		t.Errorf("one report read the ledger's calls %d times, want once", s.reads)
	}
	var used int64
	for _, op := range r.Operations {
		used += op.Units["default"]
	}
	if used != 50 {
		t.Errorf("the report's operations hold %d units, want the ledger's 50", used)
	}
}

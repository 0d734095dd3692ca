package report_test

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/costs"
	"github.com/ingestworks/ingest/pace"
	"github.com/ingestworks/ingest/report"
)

// withPlan is a store of calls that also holds a daemon's published plan.
type withPlan struct {
	callsCounter
	plan []byte
	at   time.Time
}

func (s *withPlan) Plan(context.Context, string) ([]byte, time.Time, bool, error) {
	return s.plan, s.at, s.plan != nil, nil
}

// The report shows each proxy client's spend of the day, and what is left
// to clients: the pools' room less what the daemon's plan keeps for its
// tier-1 charts until the pool's reset.
func TestReportShowsTheClientsAndWhatIsLeftToThem(t *testing.T) {
	ctx := context.Background()
	now := time.Now()
	c := costs.Default()
	s := &withPlan{at: now}
	for i, client := range []string{"ann", "ann", "bob", ""} {
		s.calls = append(s.calls, ingest.Call{QuotaKey: "k", ID: "c" + string(rune('a'+i)), At: now.Add(-time.Minute),
			Op: ingest.OpVideosList, Client: client, Charges: []ingest.Charge{{Pool: "default", Units: 1}}})
	}
	plan := pace.Status{At: now, Pools: []pace.PoolStatus{{Pool: "default", End: now.Add(10 * time.Hour)}},
		Entries: []pace.EntryStatus{{Name: "US", Tier: 1, Floor: time.Hour, Every: time.Hour, Cost: map[string]float64{"default": 3}}}}
	var err error
	if s.plan, err = json.Marshal(plan); err != nil {
		t.Fatal(err)
	}
	r, err := report.Build(ctx, report.Sources{DB: s, Limiter: report.WholePools{Costs: c}, Costs: c, QuotaKey: "k", Now: now, NewPacer: newPacer})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.ByClient) != 2 || r.ByClient[0].Client != "ann" || r.ByClient[0].Units["default"] != 2 || r.ByClient[1].Units["default"] != 1 {
		t.Errorf("ByClient = %+v, want ann 2 units and bob 1", r.ByClient)
	}
	whole, _ := c.Pool("default")
	if got, want := r.LeftToClients["default"], whole.Capacity()-30; got != want {
		t.Errorf("left to clients in default: %d, want %d, the pool's room less the 30 the plan keeps", got, want)
	}
	var text bytes.Buffer
	r.Text(&text, time.UTC)
	if !strings.Contains(text.String(), "CLIENT (ingest proxy)") || !strings.Contains(text.String(), "Left to the proxy's clients") {
		t.Errorf("the text report does not show the clients:\n%s", text.String())
	}
}

// Where the proxy's plans are known, what is left to each later priority's
// clients is shown too: what is left to clients less the floor the
// earlier priorities' daily shares keep, never below zero.
func TestReportShowsWhatIsLeftToEachPriority(t *testing.T) {
	ctx := context.Background()
	now := time.Now()
	c := costs.Default()
	s := &withPlan{}
	s.calls = []ingest.Call{{QuotaKey: "k", ID: "ca", At: now.Add(-time.Minute), Op: ingest.OpVideosList,
		Client: "ann", Charges: []ingest.Charge{{Pool: "default", Units: 1}}}}
	whole, _ := c.Pool("default")
	floors := map[int64]map[string]int64{1: {"default": 1000}, 2: {"default": whole.Capacity() + 1}}
	r, err := report.Build(ctx, report.Sources{DB: s, Limiter: report.WholePools{Costs: c}, Costs: c, QuotaKey: "k", Now: now,
		NewPacer: newPacer, Floors: floors})
	if err != nil {
		t.Fatal(err)
	}
	left := r.LeftToClients["default"]
	if got := r.LeftByPriority[1]["default"]; got != left-1000 {
		t.Errorf("left to priority 1 in default: %d, want %d, what is left to clients less the floor of 1000", got, left-1000)
	}
	if got, ok := r.LeftByPriority[2]["default"]; !ok || got != 0 {
		t.Errorf("left to priority 2 in default: %d (%v), want 0: its floor is past what is left", got, ok)
	}
	var text bytes.Buffer
	r.Text(&text, time.UTC)
	if !strings.Contains(text.String(), "to priority 1, after the earlier priorities' daily shares") {
		t.Errorf("the text report does not show priority 1's part:\n%s", text.String())
	}
}

package proxy_test

import (
	"context"
	"log/slog"
	"net/http"
	"testing"
	"time"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/internal/rig/clocktest"
	"github.com/ingestworks/ingest/internal/rig/passtest"
	"github.com/ingestworks/ingest/pace"
	"github.com/ingestworks/ingest/regions"
)

// dayCosts is the shipped pools' shape (a 24-hour window and the Pacific
// day) small enough that the clients meet every budget within a day.
const dayCosts = `
pools:
  default: {limit: 400, reserve: 0, window: 24h, day: America/Los_Angeles}
  search:  {limit: 100, reserve: 0, window: 24h, day: America/Los_Angeles}
  stats:   {limit: 10000, reserve: 0, window: 24h, day: America/Los_Angeles}
operations:
  videos.list:          {default: 1}
  videoCategories.list: {default: 1}
  i18nRegions.list:     {default: 1}
  search.list:          {search: 1}
  videos.batchGetStats: {stats: 1}
`

// A driven day and more, across the Pacific reset: the daemon's pacer runs
// its tier-1 chart's real passes at its slots, and three Go programs, each
// with its own token, spend through the proxy at every slot until refused:
// two with a daily share, one without (priority 1). Every slot's pass runs
// and completes; each share is spent whole on each Pacific day and never
// past; the client without a share spends on both days; the upstream's
// charge equals the ledger's on each day, the upstream's daily cap never met.
func TestThreeClientsSpendBesideThePacedDaemonAcrossTheReset(t *testing.T) {
	reset := ingest.UpstreamReset(time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC))
	start, end := reset.Add(-3*time.Hour), reset.Add(24*time.Hour)
	clk := clocktest.NewFake(start)
	r := newRigAt(t, dayCosts, `plans:
  team-a: {limit: 6000, window: 1h, proxy: {daily: {default: 40}}}
  team-b: {limit: 6000, window: 1h, proxy: {daily: {default: 40}}}
  batch:  {limit: 6000, window: 1h, proxy: {priority: 1}}
`, clk)
	r.up.Fake.SetClock(clk.Now)
	r.up.Fake.SetChartShape(100, 50)
	ctx := context.Background()
	pacer, slots := dayPacer(t, r, clk)
	clients := []string{"go-a", "go-b", "go-batch"}
	plans := map[string]string{"go-a": "team-a", "go-b": "team-b", "go-batch": "batch"}
	svcs := map[string]func() error{}
	for _, name := range clients {
		svc := r.service(t, r.addToken(t, name, plans[name]))
		svcs[name] = func() error { _, err := svc.I18nRegions.List([]string{"snippet"}).Do(); return err }
	}
	var passes, missed int
	var chargedDay1 int64 = -1
	for slot := slots.Next(start.Add(-time.Nanosecond)); slot.Before(end); slot = slots.Next(slot) {
		clk.AdvanceTo(slot)
		pacer.Look(ctx) // the daemon's look, every --every
		if chargedDay1 < 0 && !slot.Before(reset) {
			chargedDay1 = r.up.Fake.Charged(passtest.Key)
		}
		if !pacer.Due(ctx, "US", slot) {
			missed++
			t.Errorf("the pacer did not run US at its slot %s", slot.Format(time.RFC3339))
			continue
		}
		res := r.up.Pass("US")
		pacer.Ran("US", res.Units, res.Daily, res.Status)
		if res.Status != ingest.StatusCompleted {
			t.Errorf("the pass of US at %s ended %s: %v", slot.Format(time.RFC3339), res.Status, res.Err)
		}
		passes++
		for _, name := range clients {
			for range 400 {
				if err := svcs[name](); err != nil {
					if ge := apiError(t, err); ge.Code != http.StatusForbidden {
						t.Fatalf("%s at %s: HTTP %d %s, want 403 once its budget is spent", name, slot.Format(time.RFC3339), ge.Code, ge.Message)
					}
					break
				}
			}
		}
	}
	days := dayUnits(t, r, reset)
	for _, name := range []string{"go-a", "go-b"} {
		if days[0][name] != 40 || days[1][name] != 40 {
			t.Errorf("%s spent %d units the first Pacific day and %d the second, want its share of 40 on each", name, days[0][name], days[1][name])
		}
	}
	if days[0]["go-batch"] == 0 || days[1]["go-batch"] == 0 {
		t.Errorf("the client without a share spent %d and %d units, want some on each day", days[0]["go-batch"], days[1]["go-batch"])
	}
	charged := r.up.Fake.Charged(passtest.Key)
	if chargedDay1 != days[0]["all"] || charged-chargedDay1 != days[1]["all"] {
		t.Errorf("the upstream charged %d and %d units, the ledger holds %d and %d: want each day the same",
			chargedDay1, charged-chargedDay1, days[0]["all"], days[1]["all"])
	}
	t.Logf("%d passes of US, %d slots missed; by day, the ledger holds %v and %v", passes, missed, days[0], days[1])
}

// dayPacer is the daemon's pacer of one tier-1 chart, US, every half hour,
// publishing its plans to the rig's ledger as the daemon does, on clk.
func dayPacer(t *testing.T, r *rig, clk ingest.Clock) (*pace.Pacer, regions.Slots) {
	t.Helper()
	slots, err := regions.Stagger(30*time.Minute, 0, 1)
	if err != nil {
		t.Fatal(err)
	}
	p, err := pace.New(pace.Config{Pools: r.up.Costs.Pools, State: r.up.Limiter.State, Clock: clk, Refresh: 30 * time.Minute,
		Entries: []pace.Entry{{Name: "US", Tier: 1, Floor: 30 * time.Minute, Cost: map[string]float64{"default": 2}, Slots: slots}},
		Daily:   map[string]float64{"default": 1}, Publish: pace.Keep(r.ledger, passtest.QuotaKey, slog.New(slog.DiscardHandler))})
	if err != nil {
		t.Fatal(err)
	}
	return p, slots
}

// dayUnits is what the ledger holds on each side of reset (given-back
// calls left out), by client ("" the daemon's) and all together ("all").
func dayUnits(t *testing.T, r *rig, reset time.Time) [2]map[string]int64 {
	t.Helper()
	calls, err := r.ledger.Calls(context.Background(), passtest.QuotaKey, reset.AddDate(0, 0, -3))
	if err != nil {
		t.Fatal(err)
	}
	days := [2]map[string]int64{{}, {}}
	for _, c := range calls {
		d := days[0]
		if !c.At.Before(reset) {
			d = days[1]
		}
		for _, ch := range c.Charges {
			d[c.Client] += ch.Units
			d["all"] += ch.Units
		}
	}
	return days
}

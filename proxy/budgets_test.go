package proxy_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/internal/rig/clocktest"
	"github.com/ingestworks/ingest/internal/rig/passtest"
	"github.com/ingestworks/ingest/pace"
)

// A client's daily share of a pool is counted from the ledger: past it,
// its calls are refused unsent as the upstream's spent quota, until the
// upstream's day ends.
func TestAClientStopsAtItsDailyShare(t *testing.T) {
	r := newRigWith(t, "", "plans:\n  team: {limit: 100, window: 1h, proxy: {daily: {default: 2}}}\n")
	svc := r.service(t, r.token)
	for range 2 {
		if _, err := svc.I18nRegions.List([]string{"snippet"}).Do(); err != nil {
			t.Fatal(err)
		}
	}
	_, err := svc.I18nRegions.List([]string{"snippet"}).Do()
	ge := apiError(t, err)
	if ge.Code != http.StatusForbidden || reason(ge) != "quotaExceeded" || !strings.Contains(ge.Message, "client ann's daily share of pool default") {
		t.Errorf("the call past the share: HTTP %d %q %q, want 403 quotaExceeded naming ann's share", ge.Code, reason(ge), ge.Message)
	}
	if charged, led := r.up.Fake.Charged(passtest.Key), r.ledgerUnits(t); charged != 2 || led != 2 {
		t.Errorf("the upstream charged %d units, the ledger holds %d: want 2 each", charged, led)
	}
}

// A call dearer than the plan's max_cost is refused unless the plan grants
// its operation; a token whose plan the file lacks spends nothing.
func TestAPlanGrantsTheDearCalls(t *testing.T) {
	const dearSearch = `
pools:
  default: {limit: 10000, reserve: 0, window: 24h, day: America/Los_Angeles}
  search:  {limit: 1000, reserve: 0, window: 24h, day: America/Los_Angeles}
  stats:   {limit: 10000, reserve: 0, window: 24h, day: America/Los_Angeles}
operations:
  videos.list:          {default: 1}
  videoCategories.list: {default: 1}
  i18nRegions.list:     {default: 1}
  search.list:          {search: 100}
  videos.batchGetStats: {stats: 1}
`
	for _, c := range []struct {
		name, plans string
		code        int
	}{
		{"not granted", "plans:\n  team: {limit: 100, window: 1h}\n", http.StatusForbidden},
		{"granted", "plans:\n  team: {limit: 100, window: 1h, proxy: {grants: [search.list]}}\n", http.StatusOK},
		{"plan not in the file", "plans:\n  other: {limit: 100, window: 1h}\n", http.StatusForbidden},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := newRigWith(t, dearSearch, c.plans)
			res, err := http.Get(r.url + "/youtube/v3/search?part=id&q=music&key=" + r.token)
			if err != nil {
				t.Fatal(err)
			}
			res.Body.Close()
			if res.StatusCode != c.code {
				t.Errorf("search.list at 100 units: HTTP %d, want %d", res.StatusCode, c.code)
			}
			// The fake charges by the registry, this costs file by its own
			// price: the call is counted as sent, and the ledger holds its price.
			want, units := int64(0), int64(0)
			if c.code == http.StatusOK {
				want, units = 1, 100
			}
			if got, led := r.up.Fake.Requests(), r.ledgerUnits(t); got != want || led != units {
				t.Errorf("%d calls reached the upstream and the ledger holds %d units, want %d and %d", got, led, want, units)
			}
		})
	}
}

// The daemon's plan comes first: what its tier-1 charts need of a pool
// until the pool's reset is kept from every client, which spends what the
// plan leaves.
func TestClientsSpendWhatTheDaemonsPlanLeaves(t *testing.T) {
	const small = `
pools:
  default: {limit: 40, reserve: 0, window: 24h, day: America/Los_Angeles}
  search:  {limit: 100, reserve: 0, window: 24h, day: America/Los_Angeles}
  stats:   {limit: 10000, reserve: 0, window: 24h, day: America/Los_Angeles}
` + everyOperation
	// Five hours before the upstream's reset, so that the plan's ten hours
	// reach past it whatever the host's hour: the refusal frees after it.
	reset := ingest.UpstreamReset(time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC))
	r := newRigAt(t, small, "plans:\n  team: {limit: 100, window: 1h}\n", clocktest.NewFake(reset.Add(-5*time.Hour)))
	now := r.up.Clock.Now()
	// Ten hours of an hourly tier-1 chart at 3 units a pass keep 30 of the
	// pool's 40; a tier-2 chart and a category are the clients' to contend with.
	plan := pace.Status{At: now, Pools: []pace.PoolStatus{{Pool: "default", End: now.Add(10 * time.Hour)}},
		Entries: []pace.EntryStatus{
			{Name: "US", Priority: 0, Tier: 1, Floor: time.Hour, Every: time.Hour, Cost: map[string]float64{"default": 3}},
			{Name: "GB", Priority: 0, Tier: 2, Floor: 2 * time.Hour, Every: 2 * time.Hour, Cost: map[string]float64{"default": 3}},
			{Name: "US/10", Priority: 1, Tier: 1, Floor: time.Hour, Every: time.Hour, Cost: map[string]float64{"default": 1}},
		}}
	doc, err := json.Marshal(plan)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.ledger.SavePlan(context.Background(), passtest.QuotaKey, now, doc); err != nil {
		t.Fatal(err)
	}
	svc := r.service(t, r.token)
	var spent int
	for range 12 {
		if _, err := svc.I18nRegions.List([]string{"snippet"}).Do(); err != nil {
			ge := apiError(t, err)
			if ge.Code != http.StatusForbidden || reason(ge) != "quotaExceeded" || !strings.Contains(ge.Message, "left to clients") {
				t.Errorf("the refusal: HTTP %d %q %q, want 403 quotaExceeded naming what is left to clients", ge.Code, reason(ge), ge.Message)
			}
			break
		}
		spent++
	}
	if spent != 10 {
		t.Errorf("the client made %d calls, want the 10 units the plan leaves", spent)
	}
}

// A plan of a later priority spends what is left to clients only down to
// the daily shares of the plans before it: with 10 units left and a
// priority-0 plan's share of 6, the priority-1 client takes 4 and is
// refused; the priority-0 client takes the rest.
func TestALaterPriorityLeavesTheEarliersShare(t *testing.T) {
	const small = `
pools:
  default: {limit: 10, reserve: 0, window: 24h, day: America/Los_Angeles}
  search:  {limit: 100, reserve: 0, window: 24h, day: America/Los_Angeles}
  stats:   {limit: 10000, reserve: 0, window: 24h, day: America/Los_Angeles}
` + everyOperation
	r := newRigWith(t, small, `plans:
  team:  {limit: 100, window: 1h, proxy: {daily: {default: 6}}}
  batch: {limit: 100, window: 1h, proxy: {priority: 1}}
`)
	calls := func(token string) (int, error) {
		svc := r.service(t, token)
		for n := 0; n < 12; n++ {
			if _, err := svc.I18nRegions.List([]string{"snippet"}).Do(); err != nil {
				return n, err
			}
		}
		return 12, nil
	}
	n, err := calls(r.addToken(t, "bob", "batch"))
	if n != 4 {
		t.Errorf("the priority-1 client made %d calls, want the 4 the priority-0 share of 6 leaves of 10", n)
	}
	ge := apiError(t, err)
	if ge.Code != http.StatusForbidden || reason(ge) != "quotaExceeded" || !strings.Contains(ge.Message, "pool default's part left to clients of priority 1") {
		t.Errorf("the priority-1 refusal: HTTP %d %q %q, want 403 quotaExceeded naming priority 1's part", ge.Code, reason(ge), ge.Message)
	}
	if n, _ := calls(r.token); n != 6 {
		t.Errorf("the priority-0 client made %d calls, want its share of 6", n)
	}
	if charged := r.up.Fake.Charged(passtest.Key); charged != 10 {
		t.Errorf("the upstream charged %d units, want the pool's 10", charged)
	}
}

// What a client takes stays in the pool's window a whole window: an hour
// before the Pacific reset, a greedy client leaves the daemon's hourly
// tier-1 chart its need over the next whole window, not only to the reset,
// so that each of its passes through the next day finds room though the
// day's count starts again at the reset and the window's does not.
func TestAGreedyClientBeforeTheResetLeavesTierOneTheWindow(t *testing.T) {
	const small = `
pools:
  default: {limit: 40, reserve: 0, window: 24h, day: America/Los_Angeles}
  search:  {limit: 100, reserve: 0, window: 24h, day: America/Los_Angeles}
  stats:   {limit: 10000, reserve: 0, window: 24h, day: America/Los_Angeles}
` + everyOperation
	reset := ingest.UpstreamReset(time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC))
	clk := clocktest.NewFake(reset.Add(-time.Hour))
	r := newRigAt(t, small, "plans:\n  team: {limit: 100, window: 1h}\n", clk)
	ctx, now := context.Background(), clk.Now()
	plan := pace.Status{At: now, Pools: []pace.PoolStatus{{Pool: "default", End: reset, Window: 24 * time.Hour}},
		Entries: []pace.EntryStatus{{Name: "US", Tier: 1, Floor: time.Hour, Every: time.Hour, Cost: map[string]float64{"default": 1}}}}
	doc, err := json.Marshal(plan)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.ledger.SavePlan(ctx, passtest.QuotaKey, now, doc); err != nil {
		t.Fatal(err)
	}
	svc := r.service(t, r.token)
	var spent int
	for range 41 {
		if _, err := svc.I18nRegions.List([]string{"snippet"}).Do(); err != nil {
			if ge := apiError(t, err); !strings.Contains(ge.Message, "over the next whole window") {
				t.Errorf("the refusal: HTTP %d %q, want it to name the window's need", ge.Code, ge.Message)
			}
			break
		}
		spent++
	}
	if spent != 16 {
		t.Errorf("the client made %d calls, want the 16 that 24 hourly passes leave of 40", spent)
	}
	for h := range 24 {
		clk.AdvanceTo(now.Add(time.Duration(h) * time.Hour))
		d, err := r.up.Limiter.Take(ctx, ingest.Caller{Region: "US"}, ingest.OpVideosList)
		if err != nil {
			t.Fatal(err)
		}
		if !d.Allowed {
			t.Fatalf("tier 1's pass %d h after the client, %s: refused (%+v), want room", h, clk.Now().Format(time.RFC3339), d.Pools)
		}
	}
}

package ratelimit

import (
	"strings"
	"testing"
	"time"
)

func TestDefaultAPIPlans(t *testing.T) {
	a := DefaultAPIPlans()
	for _, want := range []APIPlan{{"anonymous", 600, time.Hour, 60}, {"standard", 10000, time.Hour, 1000}} {
		if got, ok := a.Plan(want.Name); !ok || got != want {
			t.Errorf("plan %s: got %+v (%v), want %+v", want.Name, got, ok, want)
		}
	}
	if got := a.Cost("search"); got != 5 {
		t.Errorf("Cost(search) = %d, want 5", got)
	}
	if got := a.Cost("charts"); got != 1 {
		t.Errorf("Cost(charts) = %d, want 1 (unlisted)", got)
	}
}

func TestParseAPIPlansErrors(t *testing.T) {
	t.Parallel()
	plans := "plans:\n  free: {limit: 10, window: 1m}\n"
	for _, tc := range []struct{ name, body, want string }{
		{"unknown top key", plans + "burst: 3\n", "plans.yaml:3: burst: unknown key (want plans, routes)"},
		{"no plans", "routes: {search: 2}\n", "plans.yaml:1: plans: missing"},
		{"empty plans", "plans: {}\n", "plans.yaml:1: plans: at least one plan is needed"},
		{"unknown plan key", "plans:\n  free: {limit: 10, window: 1m, rate: 2}\n", "plans.yaml:2: plans.free.rate: unknown key (want limit, window, burst, proxy)"},
		{"burst above the limit", "plans:\n  free: {limit: 10, window: 1m, burst: 11}\n", "plans.yaml:2: plans.free.burst: must be at most the limit (10), got 11"},
		{"burst below a route", "plans:\n  free: {limit: 10, window: 1m, burst: 2}\nroutes:\n  search: 3\n", "plans.yaml:2: plans.free.burst: 2 is below the dearest route's cost (3)"},
		{"burst slower than a year", "plans:\n  free: {limit: 400, window: 744h, burst: 400}\n", "plans.yaml:2: plans.free.burst: a burst of 400 takes more than a year to come back"},
		{"zero limit", "plans:\n  free: {limit: 0, window: 1m}\n", "plans.yaml:2: plans.free.limit: must be > 0, got 0"},
		{"no window", "plans:\n  free: {limit: 5}\n", "plans.yaml:2: plans.free.window: missing"},
		{"bad window", "plans:\n  free: {limit: 5, window: soon}\n", `plans.yaml:2: plans.free.window: must be a duration like 24h or 90s, got "soon"`},
		{"sub-second window", "plans:\n  free: {limit: 5, window: 500ms}\n", "plans.yaml:2: plans.free.window: must be at least 1s"},
		{"plan name with a space", "plans:\n  my plan: {limit: 5, window: 1m}\n", `plans.yaml:2: plans: "my plan" is not a plain identifier`},
		{"duplicate plan", plans + "  free: {limit: 5, window: 1m}\n", "plans.yaml:3: plans.free: duplicate key"},
		{"zero cost", plans + "routes:\n  search: 0\n", "plans.yaml:4: routes.search: must be > 0, got 0"},
		{"cost above a limit", plans + "routes:\n  search: 11\n", "plans.yaml:4: routes.search: 11 units can never fit plan free (limit 10)"},
		{"syntax", "plans: [\n", "plans.yaml:1: yaml: line 1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseAPIPlans("plans.yaml", []byte(tc.body))
			if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
				t.Fatalf("got %v, want an error starting %q", err, tc.want)
			}
		})
	}
}

// TestAPIPlanBurst: a plan without a burst gets a tenth of its limit, or
// the dearest route when that is more; the interval makes burst plus one
// window's refill the limit.
func TestAPIPlanBurst(t *testing.T) {
	t.Parallel()
	a, err := ParseAPIPlans("plans.yaml", []byte("plans:\n  a: {limit: 95, window: 1h}\n  b: {limit: 20, window: 1h}\n  c: {limit: 7, window: 1s, burst: 7}\n  d: {limit: 3, window: 1s}\nroutes:\n  search: 3\n"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []struct {
		name     string
		burst    int64
		interval time.Duration
	}{
		{"a", 10, 41_860_466 * time.Microsecond}, // ceil(95/10); 86 units a window, the µs rounded up
		{"b", 3, 200 * time.Second},              // the search route's 3 over 20/10; 18 a window
		{"c", 7, time.Second},                    // the whole limit at once, then one a window
		{"d", 3, time.Second},                    // never above the limit
	} {
		p, _ := a.Plan(want.name)
		if p.Burst != want.burst || p.Interval() != want.interval {
			t.Errorf("plan %s: burst %d interval %s, want %d and %s", want.name, p.Burst, p.Interval(), want.burst, want.interval)
		}
	}
}

func TestAPIPlansCheckRoutes(t *testing.T) {
	a, err := ParseAPIPlans("plans.yaml", []byte("plans:\n  free: {limit: 10, window: 1m}\nroutes:\n  search: 2\n  chart: 1\n"))
	if err != nil {
		t.Fatal(err)
	}
	err = a.CheckRoutes([]string{"search", "charts"})
	want := "plans.yaml:5: routes.chart: unknown route (routes are search, charts)"
	if err == nil || err.Error() != want {
		t.Fatalf("got %v, want %q", err, want)
	}
	if err := a.CheckRoutes([]string{"search", "chart"}); err != nil {
		t.Fatal(err)
	}
}

// A token may hold any plan of the file but the anonymous one.
func TestAPIPlansUsable(t *testing.T) {
	p := DefaultAPIPlans()
	if !p.Usable("standard") {
		t.Error("the file's standard plan is not usable")
	}
	if p.Usable(AnonymousPlan) {
		t.Error("the anonymous plan is usable by a token")
	}
	if p.Usable("no-such-plan") {
		t.Error("a plan not in the file is usable")
	}
}

// A plan's proxy: section gives its tokens' daily share of each pool, the
// dearest call they may make and the operations granted beyond it; a pool
// or an operation the costs file lacks is named with its line.
func TestProxyPlans(t *testing.T) {
	t.Parallel()
	a, err := ParseAPIPlans("plans.yaml", []byte(`plans:
  team:  {limit: 10, window: 1m, proxy: {daily: {default: 500, search: 0}, max_cost: 2, grants: [search.list]}}
  other: {limit: 10, window: 1m}
`))
	if err != nil {
		t.Fatal(err)
	}
	team, other := a.ProxyOf("team"), a.ProxyOf("other")
	if team.Daily["default"] != 500 || team.Daily["search"] != 0 || len(team.Daily) != 2 {
		t.Errorf("team's daily shares %v, want default 500 and search 0", team.Daily)
	}
	for _, c := range []struct {
		plan  ProxyPlan
		op    string
		units int64
		want  bool
	}{
		{team, "videos.list", 2, true}, {team, "videos.list", 3, false}, {team, "search.list", 100, true},
		{other, "videos.list", 1, true}, {other, "videos.list", 2, false}, {a.ProxyOf("nobody"), "videos.list", 1, true},
	} {
		if got := c.plan.Allows(c.op, c.units); got != c.want {
			t.Errorf("Allows(%s, %d) = %v, want %v", c.op, c.units, got, c.want)
		}
	}
	pools, ops := []string{"default", "search"}, []string{"videos.list", "search.list"}
	late, err := ParseAPIPlans("plans.yaml", []byte(`plans:
  team:  {limit: 10, window: 1m, proxy: {daily: {default: 500}}}
  pair:  {limit: 10, window: 1m, proxy: {daily: {default: 200}, priority: 1}}
  batch: {limit: 10, window: 1m, proxy: {priority: 2}}
`))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		plan, pool string
		want       int64
	}{{"team", "default", 0}, {"pair", "default", 500}, {"batch", "default", 700}, {"batch", "search", 0}, {"nobody", "default", 0}} {
		if got := late.FloorOf(c.plan, c.pool); got != c.want {
			t.Errorf("FloorOf(%s, %s) = %d, want %d, the shares of the plans before it", c.plan, c.pool, got, c.want)
		}
	}
	if got := late.Floors(); len(got) != 2 || got[1]["default"] != 500 || got[2]["default"] != 700 {
		t.Errorf("Floors() = %v, want priority 1 down to 500 of default and 2 down to 700", got)
	}
	if _, err := ParseAPIPlans("plans.yaml", []byte("plans:\n  team: {limit: 10, window: 1m, proxy: {priority: -1}}\n")); err == nil || !strings.Contains(err.Error(), "plans.team.proxy.priority") {
		t.Errorf("a negative priority: %v, want the field named", err)
	}
	if err := a.CheckProxy(pools, ops); err != nil {
		t.Errorf("CheckProxy: %v", err)
	}
	if err := a.CheckProxy([]string{"default"}, ops); err == nil || !strings.HasPrefix(err.Error(), "plans.yaml:2: plans.team.proxy.daily.search: no such pool") {
		t.Errorf("CheckProxy without the search pool: %v, want the line and field named", err)
	}
	if err := a.CheckProxy(pools, []string{"videos.list"}); err == nil || !strings.Contains(err.Error(), "plans.team.proxy.grants: search.list is no operation") {
		t.Errorf("CheckProxy without search.list: %v, want the grant named", err)
	}
}

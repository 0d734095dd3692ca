package ingest

import (
	"strings"
	"testing"
	"time"
)

func TestDefaultAPIPlans(t *testing.T) {
	a := DefaultAPIPlans()
	for _, want := range []APIPlan{{"anonymous", 600, time.Hour}, {"standard", 10000, time.Hour}} {
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
		{"unknown plan key", "plans:\n  free: {limit: 10, window: 1m, burst: 2}\n", "plans.yaml:2: plans.free.burst: unknown key (want limit, window)"},
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

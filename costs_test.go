package ingest

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func TestDefaultCosts(t *testing.T) {
	c := DefaultCosts()
	def, ok := c.Pool("default")
	if !ok || def.Limit != 10000 || def.Reserve != 500 || def.Window != 24*time.Hour || def.Capacity() != 9500 {
		t.Fatalf("pool default: got %+v, want limit 10000 reserve 500 window 24h", def)
	}
	got, err := c.Op("search.list")
	if err != nil {
		t.Fatal(err)
	}
	want := []Charge{{"default", 100}, {"search", 1}}
	if len(got) != 2 || got[0] != want[0] || got[1] != want[1] {
		t.Fatalf("search.list: got %v, want %v", got, want)
	}
	if c.FailOpenMaxCost != 1 {
		t.Fatalf("fail_open_max_cost: got %d, want 1", c.FailOpenMaxCost)
	}
	if _, err := c.Op("channels.list"); err == nil {
		t.Fatal("Op(channels.list): want an error for an operation not in costs.yaml")
	}
}

func TestParseCostsErrors(t *testing.T) {
	const pools = "pools:\n  default: {limit: 100, reserve: 10, window: 24h}\n"
	const ops = "operations:\n  videos.list: {default: 1}\n"
	tests := []struct {
		name, yaml, want string
	}{
		{"unknown top key", "fail_open_max_cost: 1\nbogus: 2\n" + pools + ops, "costs.yaml:2: bogus: unknown key"},
		{"unknown pool key", "pools:\n  default: {limit: 100, reserve: 10, window: 24h, burst: 3}\n" + ops, "costs.yaml:2: pools.default.burst: unknown key"},
		{"unknown pool in op", pools + "operations:\n  videos.list: {defualt: 1}\n", `costs.yaml:4: operations.videos.list.defualt: unknown pool "defualt"`},
		{"zero cost", pools + "operations:\n  videos.list: {default: 0}\n", "costs.yaml:4: operations.videos.list.default: must be > 0, got 0"},
		{"negative limit", "pools:\n  default: {limit: -5, window: 24h}\n" + ops, "costs.yaml:2: pools.default.limit: must be > 0, got -5"},
		{"reserve not below limit", "pools:\n  default: {limit: 100, reserve: 100, window: 24h}\n" + ops, "costs.yaml:2: pools.default.reserve: must be below limit 100, got 100"},
		{"bad window", "pools:\n  default: {limit: 100, window: 1 day}\n" + ops, `costs.yaml:2: pools.default.window: must be a duration like 24h or 90s, got "1 day"`},
		{"missing window", "pools:\n  default: {limit: 100}\n" + ops, "costs.yaml:2: pools.default.window: missing"},
		{"cost never fits", pools + "operations:\n  search.list: {default: 91}\n", "costs.yaml:4: operations.search.list.default: 91 units can never fit pool default"},
		{"not a number", pools + "operations:\n  videos.list: {default: one}\n", `costs.yaml:4: operations.videos.list.default: must be a whole number, got "one"`},
		{"duplicate key", pools + "operations:\n  videos.list: {default: 1}\n  videos.list: {default: 2}\n", "costs.yaml:5: operations.videos.list: duplicate key"},
		{"missing operations", pools, "operations: missing"},
		{"syntax", "pools: [\n", "costs.yaml:"},
		{"empty op", pools + "operations:\n  videos.list: {}\n", "operations.videos.list: must charge at least one pool"},
		{"negative fail open", "fail_open_max_cost: -1\n" + pools + ops, "fail_open_max_cost: must be >= 0, got -1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseCosts("costs.yaml", []byte(tt.yaml))
			if err == nil {
				t.Fatalf("got no error, want %q", tt.want)
			}
			var ce *CostsError
			if !errors.As(err, &ce) {
				t.Fatalf("got %T %v, want a *CostsError", err, err)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("got %q, want it to contain %q", err, tt.want)
			}
		})
	}
}

// FuzzParseCosts checks that the loader never panics and that whatever it
// accepts keeps the promises the limiter relies on.
func FuzzParseCosts(f *testing.F) {
	f.Add(defaultCosts)
	f.Add([]byte("pools:\n  a: {limit: 1, window: 1s}\noperations:\n  x: {a: 1}\n"))
	f.Add([]byte("pools: {a: {limit: 5, reserve: 4, window: 1ms}}\noperations: {x: {a: 1}, y: {a: 1}}\n"))
	f.Add([]byte("operations:\n  x: {a: 1}\npools:\n  a: {limit: 9, window: 2h}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := ParseCosts("fuzz.yaml", data)
		if err != nil {
			var ce *CostsError
			if !errors.As(err, &ce) || !strings.HasPrefix(err.Error(), "fuzz.yaml:") {
				t.Fatalf("error %q does not name the file and line", err)
			}
			return
		}
		for _, p := range c.Pools {
			if p.Limit <= 0 || p.Reserve < 0 || p.Reserve >= p.Limit || p.Window <= 0 {
				t.Fatalf("accepted a bad pool: %+v", p)
			}
		}
		for op, charges := range c.Operations {
			if len(charges) == 0 {
				t.Fatalf("accepted %s with no charges", op)
			}
			for _, ch := range charges {
				p, ok := c.Pool(ch.Pool)
				if !ok || ch.Units <= 0 || ch.Units > p.Capacity() {
					t.Fatalf("accepted %s charge %+v that cannot fit", op, ch)
				}
			}
		}
	})
}

func TestUpstreamReset(t *testing.T) {
	tests := []struct{ now, want string }{
		{"2026-11-21T09:00:00Z", "2026-11-22T08:00:00Z"}, // PST, UTC-8
		{"2026-07-01T06:59:59Z", "2026-07-01T07:00:00Z"}, // PDT, UTC-7
		{"2026-07-01T07:00:00Z", "2026-07-02T07:00:00Z"}, // exactly midnight: the next one
		{"2026-03-08T09:00:00Z", "2026-03-09T07:00:00Z"}, // spring-forward day is 23h long
	}
	for _, tt := range tests {
		now, _ := time.Parse(time.RFC3339, tt.now)
		if got := UpstreamReset(now).UTC().Format(time.RFC3339); got != tt.want {
			t.Errorf("UpstreamReset(%s) = %s, want %s", tt.now, got, tt.want)
		}
	}
}

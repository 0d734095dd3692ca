package costs

import (
	"errors"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/ingestworks/ingest"
)

func TestDefaultCosts(t *testing.T) {
	c := Default()
	def, ok := c.Pool("default")
	if !ok || def.Limit != 10000 || def.Reserve != 500 || def.Window != 24*time.Hour || def.Capacity() != 9500 {
		t.Fatalf("pool default: got %+v, want limit 10000 reserve 500 window 24h", def)
	}
	if def.DayName() != "America/Los_Angeles" || def.FailOpen != (ingest.FailOpen{MaxCost: 1, Budget: 200}) {
		t.Fatalf("pool default: day %q, fail_open %+v; want America/Los_Angeles, {1 200}", def.DayName(), def.FailOpen)
	}
	search, _ := c.Pool("search")
	if search.Limit != 100 || search.Capacity() != 95 || search.FailOpen != (ingest.FailOpen{}) || search.DayName() != "America/Los_Angeles" {
		t.Fatalf("pool search: got %+v, want limit 100, reserve 5, closed, Los Angeles days", search)
	}
	// The 2026 model: search.list and videos.batchGetStats draw only from
	// buckets of their own, nothing from the shared 10,000.
	for op, want := range map[string]ingest.Charge{ingest.OpSearchList: {Pool: "search", Units: 1}, ingest.OpBatchGetStats: {Pool: "stats", Units: 1},
		ingest.OpVideosList: {Pool: "default", Units: 1}, ingest.OpCategoriesList: {Pool: "default", Units: 1}, ingest.OpRegionsList: {Pool: "default", Units: 1}} {
		got, err := c.Op(op)
		if err != nil || len(got) != 1 || got[0] != want {
			t.Errorf("%s: got %v (%v), want [%v]", op, got, err, want)
		}
	}
	if _, err := c.Op("videos.insert"); err == nil {
		t.Fatal("Op(videos.insert): want an error for an operation not in costs.yaml")
	}
}

func TestParseCostsErrors(t *testing.T) {
	const pools = "pools:\n  default: {limit: 100, reserve: 10, window: 24h}\n"
	const ops = "operations:\n  videos.list: {default: 1}\n"
	tests := []struct {
		name, yaml, want string
	}{
		{"unknown top key", "bogus: 2\n" + pools + ops, "costs.yaml:1: bogus: unknown key"},
		{"old fail_open_max_cost", "fail_open_max_cost: 1\n" + pools + ops, "costs.yaml:1: fail_open_max_cost: no longer read: the fail policy is per pool now; write fail_open: {max_cost: 1, budget: N} under each pool"},
		{"unknown zone", "pools:\n  default: {limit: 100, window: 24h, day: Mars/Olympus}\n" + ops, `costs.yaml:2: pools.default.day: unknown time zone "Mars/Olympus"`},
		{"local zone", "pools:\n  default: {limit: 100, window: 24h, day: Local}\n" + ops, `costs.yaml:2: pools.default.day: must be an IANA time zone`},
		{"limit above MaxUnits", "pools:\n  default: {limit: 1000000000001, window: 24h}\n" + ops, "costs.yaml:2: pools.default.limit: at most 1000000000000, got 1000000000001"},
		{"limit of 2^53", "pools:\n  default: {limit: 9007199254740992, window: 24h}\n" + ops, "costs.yaml:2: pools.default.limit: at most 1000000000000, got 9007199254740992"},
		{"budget above MaxUnits", "pools:\n  default: {limit: 100, window: 24h, fail_open: {max_cost: 1, budget: 1000000000001}}\n" + ops, "costs.yaml:2: pools.default.fail_open.budget: at most 1000000000000, got 1000000000001"},
		{"window over 31 days", "pools:\n  default: {limit: 100, window: 745h}\n" + ops, "costs.yaml:2: pools.default.window: at most 31 days (744h), got 745h0m0s"},
		{"control character in a pool name", "pools:\n  \"a\\x1eb\": {limit: 100, window: 24h}\n  b: {limit: 10, window: 24h}\n" + ops, `costs.yaml:2: pools: "a\x1eb" is not a plain identifier (letters, digits, _, ., -): '\x1e' is not allowed`},
		{"space in a pool name", "pools:\n  my pool: {limit: 100, window: 24h}\n" + ops, `costs.yaml:2: pools: "my pool" is not a plain identifier`},
		{"empty pool name", "pools:\n  \"\": {limit: 100, window: 24h}\n" + ops, "costs.yaml:2: pools: a name must be a plain identifier"},
		{"control character in an operation name", pools + "operations:\n  \"videos.list\\x1f\": {default: 1}\n", `costs.yaml:4: operations: "videos.list\x1f" is not a plain identifier`},
		{"colon in an operation name", pools + "operations:\n  \"videos:list\": {default: 1}\n", `costs.yaml:4: operations: "videos:list" is not a plain identifier`},
		{"fail_open budget below max_cost", "pools:\n  default: {limit: 100, window: 24h, fail_open: {max_cost: 5, budget: 2}}\n" + ops, "costs.yaml:2: pools.default.fail_open.budget: must be at least max_cost 5, got 2"},
		{"fail_open without budget", "pools:\n  default: {limit: 100, window: 24h, fail_open: {max_cost: 1}}\n" + ops, "pools.default.fail_open.budget: missing"},
		{"fail_open unknown key", "pools:\n  default: {limit: 100, window: 24h, fail_open: {max_cost: 1, budget: 5, burst: 1}}\n" + ops, "pools.default.fail_open.burst: unknown key"},
		{"fail_open never fits", "pools:\n  default: {limit: 100, reserve: 90, window: 24h, fail_open: {max_cost: 11, budget: 20}}\n" + ops, "pools.default.fail_open.max_cost: must fit the pool (limit 100 - reserve 90 = 10), got 11"},
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
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse("costs.yaml", []byte(tt.yaml))
			if err == nil {
				t.Fatalf("got no error, want %q", tt.want)
			}
			var ce *Error
			if !errors.As(err, &ce) {
				t.Fatalf("got %T %v, want a *Error", err, err)
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
	f.Add(ingest.CostsYAML)
	f.Add([]byte("pools:\n  a: {limit: 1, window: 1s}\noperations:\n  x: {a: 1}\n"))
	f.Add([]byte("pools: {a: {limit: 5, reserve: 4, window: 1ms}}\noperations: {x: {a: 1}, y: {a: 1}}\n"))
	f.Add([]byte("operations:\n  x: {a: 1}\npools:\n  a: {limit: 9, window: 2h}\n"))
	f.Add([]byte("pools:\n  \"a\\x1eb\": {limit: 10, window: 1h}\n  b: {limit: 10, window: 1h}\noperations:\n  x: {b: 1}\n"))
	f.Add([]byte("pools:\n  a: {limit: 9007199254740993, window: 745h}\noperations:\n  \"x y\": {a: 1}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := Parse("fuzz.yaml", data)
		if err != nil {
			var ce *Error
			if !errors.As(err, &ce) || !strings.HasPrefix(err.Error(), "fuzz.yaml:") {
				t.Fatalf("error %q does not name the file and line", err)
			}
			return
		}
		for _, p := range c.Pools {
			if p.Limit <= 0 || p.Limit > MaxUnits || p.Reserve < 0 || p.Reserve >= p.Limit ||
				p.Window <= 0 || p.Window > MaxWindow || p.FailOpen.Budget > MaxUnits || !plainName(p.Name) {
				t.Fatalf("accepted a bad pool: %+v", p)
			}
		}
		for op, charges := range c.Operations {
			if !plainName(op) {
				t.Fatalf("accepted operation name %q", op)
			}
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

// TestParseCostsLimitsAccepted pins the edges the refusals above stop at, so
// that a check that refuses too much fails too.
func TestParseCostsLimitsAccepted(t *testing.T) {
	const file = "pools:\n  Big_pool.2-x: {limit: 1000000000000, reserve: 1, window: 744h,\n" +
		"    fail_open: {max_cost: 999999999999, budget: 1000000000000}}\n" +
		"operations:\n  videos.batchGetStats-v2_X: {Big_pool.2-x: 999999999999}\n"
	c, err := Parse("costs.yaml", []byte(file))
	if err != nil {
		t.Fatalf("ParseCosts: %v, want the largest limit and window, and identifiers of every allowed kind, accepted", err)
	}
	p, ok := c.Pool("Big_pool.2-x")
	if !ok || p.Limit != MaxUnits || p.Window != MaxWindow {
		t.Fatalf("pool: got %+v, want limit %d window %s", p, int64(MaxUnits), MaxWindow)
	}
	if got, err := c.Op("videos.batchGetStats-v2_X"); err != nil || got[0].Units != 999999999999 {
		t.Fatalf("operation: got %v (%v)", got, err)
	}
}

// plainName is the fuzz oracle for names, written apart from the loader's.
func plainName(s string) bool {
	return s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-") == ""
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
		if got := ingest.UpstreamReset(now).UTC().Format(time.RFC3339); got != tt.want {
			t.Errorf("ingest.UpstreamReset(%s) = %s, want %s", tt.now, got, tt.want)
		}
	}
}

func TestLoadCostsRequiresEveryOperation(t *testing.T) {
	const pools = "pools:\n  default: {limit: 100, window: 24h}\n  search: {limit: 10, window: 24h}\n  stats: {limit: 10, window: 24h}\n"
	file, full := pools+"operations:\n", pools+"operations:\n"
	for _, op := range ingest.Operations {
		full += "  " + op.Name + ": " + yamlCharges(op.Cost) + "\n"
		if op.Name != ingest.OpVideosList {
			file += "  " + op.Name + ": " + yamlCharges(op.Cost) + "\n"
		}
	}
	if _, err := Parse("mine.yaml", []byte(file)); err != nil {
		t.Fatalf("ParseCosts: %v (a file may price any subset)", err)
	}
	_, err := Load("mine.yaml", []byte(file))
	const want = "mine.yaml:5: operations.videos.list: missing: the worker calls it, so it must be priced (the upstream charges {default: 1})"
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("LoadCosts without videos.list: got %v, want %q", err, want)
	}
	if _, err := Load("full.yaml", []byte(full)); err != nil {
		t.Fatalf("LoadCosts with every operation: %v", err)
	}
	_, err = Load("typo.yaml", []byte(full+"  videos.lists: {default: 1}\n"))
	const unknown = "typo.yaml:5: operations.videos.lists: unknown operation: the worker calls only "
	if err == nil || !strings.Contains(err.Error(), unknown) {
		t.Fatalf("LoadCosts with an unknown operation: got %v, want %q", err, unknown)
	}
}

// The built-in costs.yaml prices every operation of the registry as the
// upstream charges it, and nothing else: the two are read by different
// parts (the limiter, the fake upstream) and must not drift apart.
func TestBuiltInCostsAreTheRegistrys(t *testing.T) {
	c := Default()
	for _, op := range ingest.Operations {
		got, err := c.Op(op.Name)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, op.Cost) {
			t.Errorf("costs.yaml prices %s %v; the registry says the upstream charges %v", op.Name, got, op.Cost)
		}
	}
	if len(c.Operations) != len(ingest.Operations) {
		t.Errorf("costs.yaml prices %d operations, the registry has %d", len(c.Operations), len(ingest.Operations))
	}
}

func TestPerFetch(t *testing.T) {
	c := Default()
	for _, tc := range []struct {
		fetch ingest.Fetch
		want  map[string]int64
	}{
		{ingest.FetchChartPage, map[string]int64{ingest.DefaultPool: 1}},
		{ingest.FetchSearchPage, map[string]int64{ingest.DefaultPool: 1, "search": 1}},
		{ingest.FetchStats, map[string]int64{"stats": 1}},
		{ingest.FetchCategories, map[string]int64{ingest.DefaultPool: 1}},
	} {
		got, err := PerFetch(c, tc.fetch)
		if err != nil || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("PerFetch(%s) = %v, %v; want %v", tc.fetch, got, err, tc.want)
		}
	}
	partial, err := Parse("mine.yaml", []byte("pools: {default: {limit: 10, window: 1h}}\noperations: {videos.list: {default: 1}}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := PerFetch(partial, ingest.FetchSearchPage); err == nil || !strings.Contains(err.Error(), ingest.OpSearchList) {
		t.Errorf("PerFetch of an unpriced operation: got %v, want an error naming %s", err, ingest.OpSearchList)
	}
}

// The contract's copy of costs.yaml (docs/contract.md) is the built-in
// file's pools and operations, so that a new operation or price cannot
// leave the documented contract behind.
func TestContractQuotesTheBuiltInCosts(t *testing.T) {
	doc, err := os.ReadFile("../docs/contract.md")
	if err != nil {
		t.Fatal(err)
	}
	_, block, ok := strings.Cut(string(doc), "## costs.yaml\n\n```yaml\n")
	block, _, closed := strings.Cut(block, "```")
	if !ok || !closed {
		t.Fatal("docs/contract.md: no yaml block under ## costs.yaml")
	}
	quoted, err := Load("docs/contract.md", []byte(block))
	if err != nil {
		t.Fatal(err)
	}
	built := Default()
	if !reflect.DeepEqual(quoted.Operations, built.Operations) {
		t.Errorf("docs/contract.md prices %v; costs.yaml %v", quoted.Operations, built.Operations)
	}
	if len(quoted.Pools) != len(built.Pools) {
		t.Fatalf("docs/contract.md has %d pools, costs.yaml %d", len(quoted.Pools), len(built.Pools))
	}
	for i, p := range built.Pools {
		q := quoted.Pools[i]
		if q.Name != p.Name || q.Limit != p.Limit || q.Reserve != p.Reserve || q.Window != p.Window ||
			q.DayName() != p.DayName() || q.FailOpen != p.FailOpen {
			t.Errorf("docs/contract.md pool %+v; costs.yaml %+v", q, p)
		}
	}
}

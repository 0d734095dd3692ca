package pace_test

import (
	"math"
	"testing"
	"time"

	"github.com/ingestworks/ingest/pace"
)

func entry(name string, prio int, floor time.Duration, cost float64) pace.Entry {
	return pace.Entry{Name: name, Priority: prio, Floor: floor, Cost: map[string]float64{"default": cost}}
}

// makeFor plans entries against budget units of the default pool over
// 100 s, and checks each cadence of want.
func makeFor(t *testing.T, budget float64, entries []pace.Entry, bound time.Duration, want map[string]time.Duration) pace.Plan {
	t.Helper()
	p := pace.Make([]pace.Budget{{Pool: "default", Units: budget, Horizon: 100 * time.Second}}, entries, bound)
	for name, w := range want {
		if got := p.Every[name]; got != w {
			t.Errorf("%s every %v, want %v", name, got, w)
		}
	}
	return p
}

func TestMake(t *testing.T) {
	t.Parallel()
	const s = time.Second
	tests := []struct {
		name    string
		budget  float64       // default pool, over 100 s
		bound   time.Duration // 0: the default
		entries []pace.Entry
		want    map[string]time.Duration
		spend   float64
		runsOut time.Duration // 0: the floors fit
	}{
		{"fits: every entry at its floor", 1000, 0,
			[]pace.Entry{entry("US", 0, 10*s, 10), entry("US/10", 1, 10*s, 10)},
			map[string]time.Duration{"US": 10 * s, "US/10": 10 * s}, 200, 0},
		{"short: level 0 keeps its floor, level 1 is dropped", 100, 0,
			[]pace.Entry{entry("US", 0, 10*s, 10), entry("US/10", 1, 10*s, 10)},
			map[string]time.Duration{"US": 10 * s, "US/10": pace.Never}, 100, 50 * s},
		{"shorter: level 0 stretched evenly, level 1 dropped", 50, 0,
			[]pace.Entry{entry("US", 0, 10*s, 3), entry("GB", 0, 10*s, 4), entry("DE", 0, 10*s, 4), entry("US/10", 1, 10*s, 1)},
			map[string]time.Duration{"US": 22 * s, "GB": 22 * s, "DE": 22 * s, "US/10": pace.Never}, 50, 41667 * time.Millisecond},
		{"stretched evenly, a slow floor kept", 45, 0,
			[]pace.Entry{entry("US", 0, 10*s, 3), entry("GB", 0, 10*s, 3), entry("DE", 0, 100*s, 5)},
			map[string]time.Duration{"US": 15 * s, "GB": 15 * s, "DE": 100 * s}, 45, 69231 * time.Millisecond},
		{"shorter than the bound: level 0 at the bound in its order, dropped from the first it cannot hold on", 50, 20 * s,
			[]pace.Entry{entry("US", 0, 10*s, 3), entry("GB", 0, 10*s, 4), entry("DE", 0, 10*s, 4), entry("FR", 0, 10*s, 1), entry("US/10", 1, 10*s, 1)},
			map[string]time.Duration{"US": 20 * s, "GB": 20 * s, "DE": pace.Never, "FR": pace.Never, "US/10": pace.Never}, 35, 38462 * time.Millisecond},
		{"levels below share what level 0 leaves, each half as often as the one above", 200, 0,
			[]pace.Entry{entry("US", 0, 10*s, 10), entry("US/10", 1, 10*s, 10), entry("track", 2, 10*s, 10)},
			map[string]time.Duration{"US": 10 * s, "US/10": 15 * s, "track": 30 * s}, 200, 66667 * time.Millisecond},
		{"a little short: level 1 stretches first, level 0 keeps its floor", 150, 0,
			[]pace.Entry{entry("US", 0, 10*s, 10), entry("US/10", 1, 10*s, 10)},
			map[string]time.Duration{"US": 10 * s, "US/10": 20 * s}, 150, 75 * s},
		{"below: same level, equal cadence whatever the cost", 130, 0,
			[]pace.Entry{entry("US", 0, 10*s, 10), entry("US/1", 1, 10*s, 10), entry("US/2", 1, 10*s, 20)},
			map[string]time.Duration{"US": 10 * s, "US/1": 100 * s, "US/2": 100 * s}, 130, 32500 * time.Millisecond},
		{"below: a slow floor is kept when the stretch is below it", 160, 0,
			[]pace.Entry{entry("US", 0, 10*s, 10), entry("US/1", 1, 10*s, 10), entry("US/2", 1, 100*s, 10)},
			map[string]time.Duration{"US": 10 * s, "US/1": 20 * s, "US/2": 100 * s}, 160, 76191 * time.Millisecond},
		{"no budget: nothing runs", 0, 0,
			[]pace.Entry{entry("US", 0, 10*s, 10)},
			map[string]time.Duration{"US": pace.Never}, 0, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			p := makeFor(t, tc.budget, tc.entries, tc.bound, tc.want)
			if got := p.Spend["default"]; math.Abs(got-tc.spend) > 1e-6 {
				t.Errorf("spend %v, want %v", got, tc.spend)
			}
			if got := p.RunsOut["default"]; got != tc.runsOut {
				t.Errorf("runs out after %v, want %v", got, tc.runsOut)
			}
		})
	}
}

// An entry drawing from two pools takes the slower cadence, a pool too
// short for its level 0 stretches it evenly, and an entry of another pool
// is not slowed by this one's shortage.
func TestMakePools(t *testing.T) {
	t.Parallel()
	const s = time.Second
	both := pace.Entry{Name: "both", Floor: 10 * s, Cost: map[string]float64{"default": 10, "stats": 10}}
	track := pace.Entry{Name: "track", Priority: 2, Floor: 10 * s, Cost: map[string]float64{"stats": 10}}
	chart := entry("US", 0, 10*s, 10)
	p := pace.Make([]pace.Budget{
		{Pool: "default", Units: 100, Horizon: 100 * s}, // 1 unit/s for 2 units/s of floors
		{Pool: "stats", Units: 10000, Horizon: 100 * s}, // room
	}, []pace.Entry{both, track, chart}, 0)
	want := map[string]time.Duration{"both": 20 * s, "US": 20 * s, "track": 10 * s}
	for name, w := range want {
		if got := p.Every[name]; got != w {
			t.Errorf("%s every %v, want %v", name, got, w)
		}
	}
	if _, ok := p.RunsOut["stats"]; ok {
		t.Errorf("stats runs out at the fixed cadence, though it fits: %v", p.RunsOut)
	}
}

// Whatever the entries, the plan spends no more than the budget and no
// entry runs faster than its floor.
func TestMakeNeverOverspends(t *testing.T) {
	t.Parallel()
	for n := 1; n <= 40; n++ {
		var es []pace.Entry
		for i := range n {
			es = append(es, entry(string(rune('A'+i%26))+string(rune('a'+i/26)), i%3,
				time.Duration(1+i%7)*time.Minute, float64(1+i%5)))
		}
		budget := float64(n * 37 % 200)
		p := pace.Make([]pace.Budget{{Pool: "default", Units: budget, Horizon: time.Hour}}, es, 0)
		if p.Spend["default"] > budget+1e-6 {
			t.Errorf("%d entries: spends %v of %v", n, p.Spend["default"], budget)
		}
		if false {
			t.Errorf("%d entries: spends %v of %v", n, p.Spend["default"], budget)
		}
		for _, e := range es {
			if p.Every[e.Name] < e.Floor {
				t.Errorf("%d entries: %s every %v, under its floor %v", n, e.Name, p.Every[e.Name], e.Floor)
			}
		}
	}
}

func tiered(name string, prio, tier int, floor time.Duration, cost float64) pace.Entry {
	e := entry(name, prio, time.Duration(tier)*floor, cost)
	e.Tier = tier
	return e
}

// A tier-N region's chart runs at its floor (N x --every) while the pool
// holds it, is stretched to N times tier 1's cadence when it does not,
// never past the bound, and past the bound the highest tier is dropped
// first whatever the order of --regions.
func TestMakeTiers(t *testing.T) {
	t.Parallel()
	const s = time.Second
	tests := []struct {
		name    string
		budget  float64 // default pool, over 100 s
		bound   time.Duration
		entries []pace.Entry
		want    map[string]time.Duration
		dropped []string
	}{
		{"fits: each tier at its floor", 1000, 0,
			[]pace.Entry{tiered("US", 0, 1, 10*s, 6), tiered("JP", 0, 3, 10*s, 3), tiered("JP/10", 1, 3, 10*s, 3)},
			map[string]time.Duration{"US": 10 * s, "JP": 30 * s, "JP/10": 30 * s}, nil},
		{"short: tier 3 stretched to three times tier 1's cadence", 35, 0,
			[]pace.Entry{tiered("US", 0, 1, 10*s, 6), tiered("JP", 0, 3, 10*s, 3), tiered("US/10", 1, 1, 10*s, 1)},
			map[string]time.Duration{"US": 20 * s, "JP": 60 * s, "US/10": pace.Never}, []string{"US/10"}},
		{"short: tier 3 gives way so that tier 1 keeps its floor", 65, 0,
			[]pace.Entry{tiered("US", 0, 1, 10*s, 6), tiered("JP", 0, 3, 10*s, 3)},
			map[string]time.Duration{"US": 10 * s, "JP": 60 * s}, nil},
		{"short: the lowest tier gives way first, then the next", 72, 0,
			[]pace.Entry{tiered("US", 0, 1, 10*s, 6), tiered("GB", 0, 2, 10*s, 2), tiered("JP", 0, 3, 10*s, 3)},
			map[string]time.Duration{"US": 10 * s, "GB": 20 * s, "JP": 150 * s}, nil},
		{"short: tiers 2 and 3 give way together when tier 3 alone cannot", 70, 0,
			[]pace.Entry{tiered("US", 0, 1, 10*s, 6), tiered("GB", 0, 2, 10*s, 2), tiered("JP", 0, 3, 10*s, 3)},
			map[string]time.Duration{"US": 10 * s, "GB": 40 * s, "JP": 60 * s}, nil},
		{"shorter: tier 3 held at the bound while tier 1 stretches on", 27.5, 60 * s,
			[]pace.Entry{tiered("US", 0, 1, 10*s, 6), tiered("JP", 0, 3, 10*s, 3)},
			map[string]time.Duration{"US": 26667 * time.Millisecond, "JP": 60 * s}, nil},
		{"a bound between two of a tier's floors holds it at the lower", 27.5, 40 * s,
			[]pace.Entry{tiered("US", 0, 1, 10*s, 6), tiered("JP", 0, 3, 10*s, 3)},
			map[string]time.Duration{"US": 34286 * time.Millisecond, "JP": 30 * s}, nil},
		{"past the bound: the highest tier dropped first, then by --regions", 50, 20 * s,
			[]pace.Entry{tiered("US", 0, 1, 10*s, 4), tiered("JP", 0, 3, 10*s, 4), tiered("GB", 0, 2, 10*s, 4), tiered("KR", 0, 3, 10*s, 4)},
			map[string]time.Duration{"US": 20 * s, "GB": 20 * s, "JP": pace.Never, "KR": pace.Never}, []string{"JP", "KR"}},
		{"past the bound: within a tier, the last of --regions dropped", 45, 30 * s,
			[]pace.Entry{tiered("KR", 0, 3, 10*s, 6), tiered("JP", 0, 3, 10*s, 6), tiered("MX", 0, 3, 10*s, 6), tiered("US", 0, 1, 10*s, 6)},
			map[string]time.Duration{"US": 30 * s, "KR": 30 * s, "JP": pace.Never, "MX": pace.Never}, []string{"JP", "MX"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			p := makeFor(t, tc.budget, tc.entries, tc.bound, tc.want)
			if p.Spend["default"] > tc.budget+1e-6 {
				t.Errorf("spends %v of %v", p.Spend["default"], tc.budget)
			}
			for _, e := range tc.entries {
				if want := contains(tc.dropped, e.Name); p.Dropped[e.Name] != want {
					t.Errorf("%s dropped %v, want %v", e.Name, p.Dropped[e.Name], want)
				}
			}
		})
	}
}

func contains(names []string, name string) bool {
	for _, n := range names {
		if n == name {
			return true
		}
	}
	return false
}

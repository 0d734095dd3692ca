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
		{"shorter than the bound: level 0 at the bound in its order, the rest dropped", 50, 20 * s,
			[]pace.Entry{entry("US", 0, 10*s, 3), entry("GB", 0, 10*s, 4), entry("DE", 0, 10*s, 4), entry("FR", 0, 10*s, 1), entry("US/10", 1, 10*s, 1)},
			map[string]time.Duration{"US": 20 * s, "GB": 20 * s, "DE": pace.Never, "FR": 20 * s, "US/10": pace.Never}, 40, 38462 * time.Millisecond},
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
			p := pace.Make([]pace.Budget{{Pool: "default", Units: tc.budget, Horizon: 100 * s}}, tc.entries, tc.bound)
			for name, want := range tc.want {
				if got := p.Every[name]; got != want {
					t.Errorf("%s every %v, want %v", name, got, want)
				}
			}
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

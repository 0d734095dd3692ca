package sim

import (
	"slices"
	"testing"

	"github.com/ingestworks/ingest/costs"
)

// TestASeedDrawsTheSameRetryWaits: the daemon's retry jitter is drawn
// from the simulation's seed, so that a seed's replay waits as its first
// run did, and another seed waits otherwise.
func TestASeedDrawsTheSameRetryWaits(t *testing.T) {
	draws := func(seed uint64) []int64 {
		u := NewUpstream(seed, costs.Default())
		out := make([]int64, 16)
		for i := range out {
			out[i] = u.Jitter(1 << 40)
		}
		return out
	}
	a, again, other := draws(42), draws(42), draws(43)
	if !slices.Equal(a, again) {
		t.Errorf("seed 42 drew %v, then %v: a replay would wait otherwise", a, again)
	}
	if slices.Equal(a, other) {
		t.Errorf("seeds 42 and 43 drew the same waits %v: the jitter is not the seed's", a)
	}
	for _, n := range a {
		if n < 0 || n >= 1<<40 {
			t.Errorf("drew %d, outside [0, 2^40)", n)
		}
	}
}

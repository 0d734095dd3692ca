package quota

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// TestMirrorSumsItsWindowAsItWalks: decision after decision, each trimming
// the pool, reading it and adding its own call (or, now and then, an older
// one, as a refill does, which the mirror merges in), the units a view sums
// by its entries' sums are those a walk of every entry counts, over windows
// and days whose edges fall on entries, between them and outside them all.
func TestMirrorSumsItsWindowAsItWalks(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	at, n := int64(1_000_000), 0
	entry := func(ms int64) logEntry {
		n++
		return logEntry{ID: fmt.Sprintf("%d-%d", ms, n), At: ms, Units: 1 + rng.Int64N(5)}
	}
	var es []logEntry
	for range 40 {
		at += rng.Int64N(3)
		es = append(es, entry(at))
	}
	base := &poolMirror{from: 999_999, entries: summed(0, es)}
	for step := range 3000 {
		p := &poolView{base: base, trimmed: base.from}
		if rng.IntN(3) == 0 {
			p.trim(at - 60 + rng.Int64N(20))
		}
		for range 4 {
			keep := at - 80 + rng.Int64N(80)
			horizon, dayStart := keep+rng.Int64N(30), int64(0)
			if rng.IntN(2) == 0 {
				dayStart = keep - 10 + rng.Int64N(60)
			}
			used, day := p.used(horizon, dayStart, keep)
			wantUsed, wantDay := p.walked(horizon, dayStart, keep)
			if used != wantUsed || day != wantDay {
				t.Fatalf("step %d, keep %d, horizon %d, day from %d: %d and %d a day summed, %d and %d walked",
					step, keep, horizon, dayStart, used, day, wantUsed, wantDay)
			}
		}
		at += rng.Int64N(3)
		p.add(entry(at))
		if rng.IntN(10) == 0 {
			p.add(entry(at - 1 - rng.Int64N(40)))
		}
		base = p.left()
	}
}

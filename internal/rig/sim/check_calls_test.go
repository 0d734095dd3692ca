package sim

import (
	"math/rand/v2"
	"testing"
	"time"
)

// TestCallsInTimeSearchAsTheyWalk: over calls in the order of their times,
// several at one instant as the upstream answers them, what the checker
// reads of a span by a search is what it reads by a walk of every call,
// at spans whose ends fall on calls, between them and outside them all.
func TestCallsInTimeSearchAsTheyWalk(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	paths := []string{"/youtube/v3/videos", "/youtube/v3/videos:batchGetStats", "/youtube/v3/videoCategories"}
	var calls []Call
	at := t0
	charged := map[string]int64{}
	for range 400 {
		at = at.Add(time.Duration(rng.IntN(3)) * time.Minute) // 0: another call at the same instant
		c := Call{At: at, Path: paths[rng.IntN(len(paths))], Region: []string{"US", "GB"}[rng.IntN(2)]}
		for _, ch := range chargeOf(c) {
			charged[ch.Pool] += ch.Units
		}
		c.Charged = map[string]int64{"default": charged["default"], statsPool: charged[statsPool]}
		calls = append(calls, c)
	}
	searched, walked := inTime(calls), callsInTime{calls: calls}
	if !searched.sorted {
		t.Fatal("calls made in the order of their times read as out of order")
	}
	us := func(c Call) bool { return c.Region == "US" }
	span := at.Sub(t0) + 2*time.Hour
	for i := range 2000 {
		from := t0.Add(-time.Hour + time.Duration(rng.Int64N(int64(span))))
		if i%2 == 0 { // an end on a call's instant
			from = calls[rng.IntN(len(calls))].At
		}
		to := from.Add(time.Duration(rng.IntN(180)) * time.Minute)
		for _, pool := range []string{"", "default", statsPool} {
			if got, want := searched.chargedIn(pool, from, to, us), walked.chargedIn(pool, from, to, us); got != want {
				t.Fatalf("pool %q from %s to %s: %d charged by a search, %d by a walk", pool, from, to, got, want)
			}
			if pool == "" {
				continue
			}
			if got, want := searched.chargedBefore(pool, from, to), walked.chargedBefore(pool, from, to); got != want {
				t.Fatalf("pool %s after %s before %s: %d by a search, %d by a walk", pool, from, to, got, want)
			}
		}
	}
}

package ledger

import (
	"context"
	"fmt"
	"math/rand/v2"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/ingestworks/ingest"
)

// TestFollowIsTheFullRead writes a ledger at random — calls in one pool
// or several, calls written again with their region, calls given back
// (some before their rows are written), late calls stamped long before
// the newest — and reads it at random times through one follower and in
// full: every read of the follower gives what the full read gives, the
// reads that ask from before what it keeps among them.
func TestFollowIsTheFullRead(t *testing.T) {
	eachStore(t, func(t *testing.T, db both) {
		for seed := range uint64(6) {
			t.Run(fmt.Sprint(seed), func(t *testing.T) {
				followRandomly(t, db, seed)
			})
		}
	})
}

func followRandomly(t *testing.T, db both, seed uint64) {
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(seed, 80))
	key := fmt.Sprintf("follow-%s-%d", t.Name(), seed)
	base := time.Date(2026, 11, 26, 0, 0, 0, 0, time.UTC)
	now := base
	follow, days := db.Follow(key), db.FollowDays(key)
	var ids []string
	since := base
	for step := range 400 {
		switch r := rng.IntN(20); {
		case r < 9: // a call, stamped now or (late) up to an hour ago
			at := now
			if rng.IntN(4) == 0 {
				at = now.Add(-time.Duration(rng.IntN(3600)) * time.Second)
			}
			id := fmt.Sprintf("%d-%d", at.UnixMilli(), step)
			ids = append(ids, id)
			call := ingest.Call{QuotaKey: key, ID: id, Op: "videos.list", At: at, Charges: randomCharges(rng)}
			if rng.IntN(3) == 0 {
				call.Region, call.RunID = "GB", int64(step)
			}
			if err := db.RecordCall(ctx, call); err != nil {
				t.Fatal(err)
			}
		case r < 11 && len(ids) > 0: // written again, with its run
			id := ids[rng.IntN(len(ids))]
			if err := db.RecordCall(ctx, ingest.Call{QuotaKey: key, ID: id, Op: "videos.list", At: idTime(t, id),
				Region: "US", RunID: 7, Charges: []ingest.Charge{{Pool: ingest.DefaultPool, Units: 1}}}); err != nil {
				t.Fatal(err)
			}
		case r < 13: // given back: a call written, or one whose rows come later
			id := fmt.Sprintf("%d-%d", now.UnixMilli(), 10000+step)
			if len(ids) > 0 && rng.IntN(2) == 0 {
				id = ids[rng.IntN(len(ids))]
			} else {
				ids = append(ids, id)
			}
			if err := db.RecordGiveBack(ctx, ingest.Call{QuotaKey: key, ID: id}, time.Now()); err != nil {
				t.Fatal(err)
			}
		case r < 14:
			now = now.Add(time.Duration(rng.IntN(600)) * time.Second)
		default: // a read, its since mostly moving on, sometimes back
			switch rng.IntN(8) {
			case 0:
				since = since.Add(-time.Duration(rng.IntN(1800)) * time.Second)
			default:
				since = since.Add(time.Duration(rng.IntN(300)) * time.Second)
			}
			sameAsFull(t, db, follow, key, since, step)
			sameDay(t, db, days, key, now, step)
		}
	}
	sameAsFull(t, db, follow, key, since, -1)
}

func randomCharges(rng *rand.Rand) []ingest.Charge {
	switch rng.IntN(4) {
	case 0:
		return nil // a call that charges nothing, kept visible
	case 1:
		return []ingest.Charge{{Pool: ingest.DefaultPool, Units: 1}, {Pool: "search", Units: int64(1 + rng.IntN(100))}}
	default:
		return []ingest.Charge{{Pool: ingest.DefaultPool, Units: int64(1 + rng.IntN(50))}}
	}
}

func idTime(t *testing.T, id string) time.Time {
	t.Helper()
	var ms, seq int64
	if _, err := fmt.Sscanf(id, "%d-%d", &ms, &seq); err != nil {
		t.Fatal(err)
	}
	return time.UnixMilli(ms).UTC()
}

// sameAsFull reads key's calls since since through follow and in full,
// and fails when they differ.
func sameAsFull(t *testing.T, db both, follow func(context.Context, time.Time) ([]ingest.Call, error), key string, since time.Time, step int) {
	t.Helper()
	ctx := context.Background()
	got, err := follow(ctx, since)
	if err != nil {
		t.Fatal(err)
	}
	want, err := db.Calls(ctx, key, since)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) == 0 && len(want) == 0 {
		return
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("step %d, since %s: the follower read %d calls, the full read %d\nfollower: %v\nfull:     %v",
			step, since.Format(time.TimeOnly), len(got), len(want), got, want)
	}
}

// sameDay reads the units of now's day through days and as DailyUnits
// does, and fails when they differ (the calls that charge nothing, which
// DailyUnits counts under no pool, left out).
func sameDay(t *testing.T, db both, days *Days, key string, now time.Time, step int) {
	t.Helper()
	ctx := context.Background()
	got, err := days.DailyUnits(ctx, key, now, 1)
	if err != nil {
		t.Fatal(err)
	}
	want, err := db.DailyUnits(ctx, key, now, 1)
	if err != nil {
		t.Fatal(err)
	}
	delete(want, "")
	if len(got) == 0 && len(want) == 0 {
		return
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("step %d, the day of %s: followed %v, DailyUnits %v", step, now.Format(time.DateTime), got, want)
	}
}

// TestFollowMissesNoWriteInFlight writes calls and gives some back from
// several writers at once while a follower reads on: on PostgreSQL a
// write that took its number before another may commit after it, and a
// reader that went by numbers alone would step over it. Once the writers
// are done, the follower's next read is the full read.
func TestFollowMissesNoWriteInFlight(t *testing.T) {
	eachStore(t, func(t *testing.T, db both) {
		ctx := context.Background()
		key := "inflight-" + t.Name()
		base := time.Date(2026, 11, 26, 0, 0, 0, 0, time.UTC)
		follow := db.Follow(key)
		var wg sync.WaitGroup
		done := make(chan struct{})
		for w := range 4 {
			wg.Go(func() {
				for i := range 40 {
					id := fmt.Sprintf("%d-%d-%d", base.UnixMilli()+int64(i), w, i)
					call := ingest.Call{QuotaKey: key, ID: id, Op: "videos.list", At: base.Add(time.Duration(i) * time.Millisecond),
						Charges: []ingest.Charge{{Pool: ingest.DefaultPool, Units: 1}}}
					if err := db.RecordCall(ctx, call); err != nil {
						t.Error(err)
						return
					}
					if i%5 == 0 {
						if err := db.RecordGiveBack(ctx, call, time.Now()); err != nil {
							t.Error(err)
							return
						}
					}
				}
			})
		}
		reads := make(chan error, 1)
		go func() {
			defer close(reads)
			for {
				select {
				case <-done:
					return
				default:
				}
				if _, err := follow(ctx, base); err != nil {
					reads <- err
					return
				}
			}
		}()
		wg.Wait()
		close(done)
		if err := <-reads; err != nil {
			t.Fatal(err)
		}
		sameAsFull(t, db, follow, key, base, -1)
	})
}

package custody

import (
	"context"
	"strings"
	"testing"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/internal/rig/clocktest"
	"github.com/ingestworks/ingest/internal/rig/storetest"
)

// TestARunOnAnotherLimiterIsRefused: a database's first run records the
// limiter it spends on; a run on another limiter is refused, naming the
// move to type, until quota seed moves the window; then the first limiter
// is refused in turn.
func TestARunOnAnotherLimiterIsRefused(t *testing.T) {
	for _, tc := range []struct {
		name        string
		first, then string // the Redis URL of each host, "" for the embedded limiter
		fix         string // what the refusal names
	}{
		{"embedded, then Redis", "", "redis://a:6379/0", "with REDIS_URL set"},
		{"Redis, then embedded", "redis://a:6379/0", "", "--leaving-redis URL"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			c := clocktest.NewFake(start)
			path, db := database(t)
			first, then := host(t, path, tc.first, c), host(t, path, tc.then, c)
			if err := first.HeldHere(ctx, db.Ledger, key); err != nil {
				t.Fatalf("the first run: %v", err)
			}
			he := refused[*HolderError](t, then.HeldHere(ctx, db.Ledger, key))
			if he.Held.Limiter != first.Here.Limiter || he.Here.Limiter != then.Here.Limiter {
				t.Errorf("held by %+v, here %+v; want %+v and %+v", he.Held, he.Here, first.Here, then.Here)
			}
			if msg := he.Error(); !strings.Contains(msg, tc.fix) || !strings.Contains(msg, "a run at") {
				t.Errorf("the refusal does not name the fix %q and the move that put it there:\n%s", tc.fix, msg)
			}
			c.Advance(1)
			if err := then.MoveTo(ctx, []string{path}, key, "quota seed"); err != nil {
				t.Fatal(err)
			}
			if err := then.HeldHere(ctx, db.Ledger, key); err != nil {
				t.Errorf("after the move: %v", err)
			}
			he = refused[*HolderError](t, first.HeldHere(ctx, db.Ledger, key))
			if moves := he.Held.Moves; len(moves) != 2 || moves[1].By != "quota seed" || moves[1].To != then.Here.Name() {
				t.Errorf("the moves recorded: %+v, want the first run's then quota seed's to %s", moves, then.Here.Name())
			}
		})
	}
}

// TestARunOnItsLimiterRecordsNothingMore: runs on the recorded limiter
// leave its moves as they were; a Redis that failed over to another address
// is recorded, so that a refusal names the one last run on.
func TestARunOnItsLimiterRecordsNothingMore(t *testing.T) {
	ctx := context.Background()
	c := clocktest.NewFake(start)
	path, db := database(t)
	h := host(t, path, "redis://a:6379/0", c)
	for range 3 {
		if err := h.HeldHere(ctx, db.Ledger, key); err != nil {
			t.Fatal(err)
		}
	}
	w, err := recordedHolder(ctx, db.Ledger, key)
	if err != nil {
		t.Fatal(err)
	}
	if len(w.Moves) != 1 || w.Moves[0].By != runMove {
		t.Errorf("moves after three runs: %+v, want the first run's alone", w.Moves)
	}
	moved := host(t, path, "redis://b:6379/0", c)
	if err := moved.HeldHere(ctx, db.Ledger, key); err != nil {
		t.Fatalf("a Redis at a new address: %v", err)
	}
	if w, _ = recordedHolder(ctx, db.Ledger, key); w.Redis != "b:6379" || len(w.Moves) != 2 {
		t.Errorf("after a failover: %+v, want the new address and its move", w)
	}
}

// TestAHoldersMovesAreBounded: a database keeps its last moves, never a
// log that grows with every move.
func TestAHoldersMovesAreBounded(t *testing.T) {
	ctx := context.Background()
	c := clocktest.NewFake(start)
	path, db := database(t)
	hosts := []*Rules{host(t, path, "", c), host(t, path, "redis://a:6379/0", c)}
	for i := range keptMoves + 8 {
		c.Advance(1)
		if err := hosts[i%2].MoveTo(ctx, []string{path}, key, "quota seed"); err != nil {
			t.Fatal(err)
		}
	}
	w, err := recordedHolder(ctx, db.Ledger, key)
	if err != nil {
		t.Fatal(err)
	}
	if len(w.Moves) != keptMoves || !w.Moves[keptMoves-1].At.Equal(c.Now()) {
		t.Errorf("%d moves kept, the last at %v; want %d, the last at %v", len(w.Moves), w.Moves[len(w.Moves)-1].At, keptMoves, c.Now())
	}
}

// TestAnUnrecordedRedisHoldsTheWindow: a database that ran on Redis before
// databases recorded their limiter is held by that Redis: the embedded
// limiter is refused on it.
func TestAnUnrecordedRedisHoldsTheWindow(t *testing.T) {
	ctx := context.Background()
	path, db := database(t)
	if err := db.Ledger.Note(ctx, redisNote+key, RedisHash("redis://a:6379/0")); err != nil {
		t.Fatal(err)
	}
	he := refused[*HolderError](t, host(t, path, "", clocktest.NewFake(start)).HeldHere(ctx, db.Ledger, key))
	if he.Held.Redis != "(unrecorded)" || !strings.Contains(he.Error(), "before databases recorded their limiter") {
		t.Errorf("got %v", he)
	}
}

// TestAMoveToADatabaseThatCannotOpenIsAConfigurationError: quota seed and
// restore name the --ledger they could not record the move on.
func TestAMoveToADatabaseThatCannotOpenIsAConfigurationError(t *testing.T) {
	h := host(t, storetest.Path(t), "", clocktest.NewFake(start))
	err := h.MoveTo(context.Background(), []string{t.TempDir() + "/no/such/dir/x.db"}, key, "quota seed")
	if _ = refused[*ingest.ConfigError](t, err); !strings.Contains(err.Error(), "--ledger") {
		t.Errorf("got %v, want it to name --ledger", err)
	}
}

// The limiter a host's settings name: the embedded one without a Redis
// URL, else the Redis its client dials, named by address alone, never by
// a part of the URL's password, whatever the URL's shape.
func TestHolderOfReadsTheURL(t *testing.T) {
	for _, c := range []struct{ url, want string }{
		{"", "the embedded limiter in this database"},
		{"redis://:s3cret@cache.internal:6380/2", "the Redis at cache.internal:6380"},
		{"rediss://user:s3cret@cache.internal", "the Redis at cache.internal:6379"},
		{"unix://:s3cret@/run/redis/redis.sock?db=1", "the Redis at /run/redis/redis.sock"},
		{"redis://:s3cret@seed-a:7000?addr=seed-b:7001", "the Redis at seed-a:7000"},
	} {
		got := HolderOf(c.url)
		if got.Name() != c.want || strings.Contains(got.Redis, "s3cret") {
			t.Errorf("HolderOf(%q) = %q (%+v), want %q", c.url, got.Name(), got, c.want)
		}
	}
}

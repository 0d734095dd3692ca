package quota

import (
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ingestworks/ingest"
)

// TestRedisProfileFollowsTheGenerationAndTheDay: a spend's profile is built
// once and reused, but never past a change of the keys' generation or of
// a pool's day: it must then be what a new limiter would send. (window.lua
// would take a profile a day stale: its four day starts reach past the
// next midnight; so no decision shows it until two days later.)
func TestRedisProfileFollowsTheGenerationAndTheDay(t *testing.T) {
	costs, err := ingest.ParseCosts("profile", []byte(`pools:
  default: {limit: 100, reserve: 0, window: 24h, day: America/Los_Angeles}
  search:  {limit: 10, reserve: 0, window: 1h}
operations:
  videos.list: {default: 1}
  both: {default: 2, search: 1}
`))
	if err != nil {
		t.Fatal(err)
	}
	// No command is sent: the client never connects.
	c := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1"})
	defer c.Close()
	clock := time.Date(2026, 11, 22, 23, 0, 0, 0, time.UTC)
	mk := func() *Redis {
		r, err := NewRedis(c, Options{QuotaKey: "profile", Costs: costs, Worker: "w1", Logger: slog.New(slog.DiscardHandler),
			Now: func() time.Time { return clock }})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	r := mk()
	profile := func(r *Redis, op string) string {
		args, _ := r.spendArgs(r.ops[op], 1)
		return args[1].(string)
	}
	for _, op := range []string{"videos.list", "both"} {
		first := profile(r, op)
		if again := profile(r, op); again != first {
			t.Fatalf("%s: the profile changed with nothing changed: %q, then %q", op, first, again)
		}
		if n := strings.Count(first, "\x1e"); n != 3+3*len(r.ops[op].cs) {
			t.Fatalf("%s: profile %q has %d separators", op, first, n)
		}
		steps := []struct {
			what string
			do   func()
		}{
			{"a new generation", func() { r.adopted("0123456789abcdef") }},
			{"an hour later, the same day", func() { clock = clock.Add(time.Hour) }},
			{"the next day", func() { clock = clock.Add(24 * time.Hour) }},
			{"five days later", func() { clock = clock.Add(5 * 24 * time.Hour) }},
		}
		for _, s := range steps {
			s.do()
			fresh := mk()
			fresh.adopted(r.k.epoch)
			if got, want := profile(r, op), profile(fresh, op); got != want {
				t.Errorf("%s, after %s: profile %q, a new limiter sends %q", op, s.what, got, want)
			}
		}
	}
}

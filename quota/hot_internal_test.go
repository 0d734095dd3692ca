package quota

import (
	"context"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/internal/redistest"
)

// hotTwin is window.lua as a test library on a real redis-server, with a
// clock the test sets (CLOCK instead of TIME) and one function,
// window_twin, that runs the same call twice: on keyspace A as shipped,
// and on keyspace B with hot admissions turned off, so that B admits every
// call by the full path. Neither answers refusals from memory: a refusal
// from memory writes nothing where the full path may move wh (the same
// account, another string), and when each side does so depends on when the
// memo was last emptied. It returns both replies and how many calls A
// admitted hot.
func hotTwin(t *testing.T) string {
	t.Helper()
	src := windowLua
	for _, r := range []struct{ old, new string }{
		{"local t = redis.call('TIME')\n  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000) + offset",
			"return CLOCK + offset"},
		{"local out = hot_admits(h, vals[1], now, token, pr.pools[1])\n",
			"local out = HOT and hot_admits(h, vals[1], now, token, pr.pools[1])\n      if out then HOTS = HOTS + 1 end\n"},
		{"local r = memo.refused[vals[1]]", "local r = false"},
	} {
		if n := strings.Count(src, r.old); n != 1 {
			t.Fatalf("window.lua holds %q %d times, want once: update hotTwin", r.old, n)
		}
		src = strings.Replace(src, r.old, r.new, 1)
	}
	return "#!lua name=window_twin\nlocal CLOCK, HOT, HOTS = 0, true, 0\n" + src + `
redis.register_function('window_twin', function(keys, args)
  CLOCK = tonumber(args[1])
  local n, m = #keys / 2, (#args - 1) / 2
  local ka, kb, aa, ab = {}, {}, {}, {}
  for i = 1, n do ka[i], kb[i] = keys[i], keys[n + i] end
  for i = 1, m do aa[i], ab[i] = args[1 + i], args[1 + m + i] end
  HOT = true
  local ra = main(ka, aa)
  HOT = false
  local rb = main(kb, ab)
  return {ra, rb, HOTS}
end)
`
}

// TestRedisHotAdmissionsWriteWhatTheFullPathWould drives two keyspaces
// through the same 4,000 calls at the same (test) times, one as shipped
// and one decided by the full path alone, and checks after every call that
// both replied alike and hold the same state, logs, receipts, register
// and expiries. The calls mix one- and two-pool operations and costs; the
// clock moves by milliseconds, seconds, past renewals and across days, and
// two pools have the same settings, so
// that hot admissions meet every bound: entries leaving the window, a
// renewal due, a day's end, a pool nearly full, a registration.
func TestRedisHotAdmissionsWriteWhatTheFullPathWould(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	c, err := NewClient("redis://"+srv.Addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx := context.Background()
	if err := c.FunctionLoad(ctx, hotTwin(t)).Err(); err != nil {
		t.Fatal(err)
	}
	costs, err := ingest.ParseCosts("twin", []byte(`pools:
  default: {limit: 120, reserve: 20, window: 60s, day: America/Los_Angeles}
  burst:   {limit: 20, reserve: 0, window: 10s}
  twin:    {limit: 20, reserve: 0, window: 10s}
  search:  {limit: 8, reserve: 0, window: 7s}
operations:
  videos.list: {default: 1}
  ten: {default: 10}
  burst: {burst: 1}
  twin: {twin: 1}
  search.list: {search: 1}
  both: {default: 1, search: 1}
`))
	if err != nil {
		t.Fatal(err)
	}
	la, _ := time.LoadLocation("America/Los_Angeles")
	midnight := func(after int64) int64 {
		d := time.UnixMilli(after).In(la)
		return time.Date(d.Year(), d.Month(), d.Day()+1, 0, 0, 0, 0, la).UnixMilli()
	}
	clock := midnight(time.Now().UnixMilli()) - 90_000
	mk := func(q string) *Redis {
		r, err := NewRedis(c, Options{QuotaKey: q, Costs: costs, Worker: "w1", Logger: slog.New(slog.DiscardHandler),
			Now: func() time.Time { return time.UnixMilli(clock) }})
		if err != nil {
			t.Fatal(err)
		}
		if err := r.newGeneration(ctx); err != nil { // the keys' generation, from the real clock
			t.Fatal(err)
		}
		return r
	}
	a, b := mk("twinA"), mk("twinB")
	keys := func(r *Redis, sc *spendCall, reg bool) []string {
		if reg {
			return sc.regKeys
		}
		return sc.keys
	}

	rng := rand.New(rand.NewPCG(8, 1))
	ops := []string{"videos.list", "videos.list", "videos.list", "burst", "burst", "twin", "ten", "search.list", "both"}
	hots, admitted := int64(0), int64(0)
	for i := range 4000 {
		switch p := rng.IntN(1000); {
		case p < 700:
			clock += rng.Int64N(6)
		case p < 900:
			clock += rng.Int64N(3000)
		case p < 980:
			clock += 5000 + rng.Int64N(20_000)
		case p < 985:
			clock += 31_000 + rng.Int64N(60_000) // past a renewal
		default:
			clock = midnight(clock) - rng.Int64N(20_000) // to a day's end
		}
		op := ops[rng.IntN(len(ops))]
		sa, sb := a.ops[op], b.ops[op]
		reg := rng.IntN(20) == 0
		all := []any{clock}
		for _, x := range []struct {
			r  *Redis
			sc *spendCall
		}{{a, sa}, {b, sb}} {
			args, _ := x.r.spendArgs(x.sc, int64(i+1))
			args[3] = map[bool]string{true: x.r.opts.Worker, false: ""}[reg]
			all = append(all, args...)
		}
		res, err := c.FCall(ctx, "window_twin", append(keys(a, sa, reg), keys(b, sb, reg)...), all...).Slice()
		if err != nil {
			t.Fatalf("call %d (%s at %d): %v", i, op, clock, err)
		}
		if !reflect.DeepEqual(res[0], res[1]) {
			t.Fatalf("call %d (%s at %d): replies differ:\nhot  %v\nfull %v", i, op, clock, res[0], res[1])
		}
		hots = res[2].(int64)
		if r := res[0].([]any); r[0].(int64) >= 1 {
			admitted++
		}
		twinsAgree(t, c, a, b, fmt.Sprintf("after call %d (%s at %d)", i, op, clock))
	}
	// The comparison means something only if hot admissions happened, and
	// also the full path's admissions in between.
	if hots < 500 || admitted-hots < 300 {
		t.Fatalf("%d calls admitted hot and %d by the full path: the run does not exercise both", hots, admitted-hots)
	}
	t.Logf("of 4,000 calls, %d admitted hot, %d admitted by the full path", hots, admitted-hots)
}

// twinsAgree compares every key of the twins, B's generation read as A's.
func twinsAgree(t *testing.T, c redis.UniversalClient, a, b *Redis, when string) {
	t.Helper()
	ctx := context.Background()
	ka, kb := a.Keys(), b.Keys()
	for i := range ka {
		typ := c.Type(ctx, ka[i]).Val()
		if tb := c.Type(ctx, kb[i]).Val(); typ != tb {
			t.Fatalf("%s: %s is a %s, %s a %s", when, ka[i], typ, kb[i], tb)
		}
		var va, vb any
		switch typ {
		case "none":
			continue
		case "string":
			va, vb = c.Get(ctx, ka[i]).Val(), strings.ReplaceAll(c.Get(ctx, kb[i]).Val(), b.k.epoch, a.k.epoch)
		case "stream":
			va, vb = c.XRange(ctx, ka[i], "-", "+").Val(), c.XRange(ctx, kb[i], "-", "+").Val()
		case "hash":
			va, vb = c.HGetAll(ctx, ka[i]).Val(), c.HGetAll(ctx, kb[i]).Val()
		default:
			t.Fatalf("%s: %s is a %s", when, ka[i], typ)
		}
		if !reflect.DeepEqual(va, vb) {
			t.Fatalf("%s: %s and its twin differ:\nhot  %q\nfull %q", when, ka[i], va, vb)
		}
		pa, pb := c.PTTL(ctx, ka[i]).Val(), c.PTTL(ctx, kb[i]).Val()
		if (pa < 0) != (pb < 0) || (pa-pb).Abs() > 500*time.Millisecond {
			t.Fatalf("%s: %s expires in %s, its twin in %s", when, ka[i], pa, pb)
		}
	}
}

package sim

import (
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	"github.com/ingestworks/ingest/costs"
	"github.com/ingestworks/ingest/internal/rig/seedtest"
	"github.com/ingestworks/ingest/jobs"
	"github.com/ingestworks/ingest/pace"
)

// The seed and the length of make sim's run: make test runs each test on
// the seeds seedsFile keeps; make sim draws a new one (seedtest).
const (
	seedEnv = "INGEST_SIM_SEED"
	daysEnv = "INGEST_SIM_DAYS"
	// keepEnv names a folder the history (database, daemon's log) is
	// kept in, a folder a test.
	keepEnv = "INGEST_SIM_HISTORY"
	// allEnv is the days of the runs at every region, which only make
	// sim runs: each simulated day there costs a minute or more of CPU.
	allEnv = "INGEST_SIM_ALL_DAYS"
	// longEnv is the days of the long horizon's run (TestSimLong).
	longEnv = "INGEST_SIM_LONG_DAYS"
)

// signalsOutside starts os/signal's watcher before any bubble does: made
// inside one, it would belong to the bubble, and never being durably
// blocked there, it would hold virtual time still.
func signalsOutside() {
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, syscall.SIGUSR2)
	signal.Stop(ch)
}

// seedsFile keeps the seeds make test runs each simulation on, each with
// why it is there: a bug it once found, a shape it covers.
const seedsFile = "testdata/seeds.txt"

// seeds is the seeds t runs on: INGEST_SIM_SEED's ("random" draws one from
// the kernel, a number replays it), else the ones seedsFile keeps for t.
func seeds(t *testing.T) []uint64 {
	t.Helper()
	var fixed []uint64
	if os.Getenv(seedEnv) == "" {
		fixed = seedtest.Listed(t, seedsFile, t.Name())
	}
	return seedtest.Seeds(t, seedEnv, fixed...)
}

// days is INGEST_SIM_DAYS, or def.
func days(t *testing.T, def int) int {
	if v := os.Getenv(daysEnv); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			t.Fatalf("%s: %q is not a number of days (1 or more)", daysEnv, v)
		}
		return n
	}
	return def
}

// shipped is `ingest run`'s defaults on the shipped costs, tracking on.
func shipped() Shape {
	return Shape{Every: time.Hour, MaxStale: pace.DefaultBound, TrackFor: 7 * 24 * time.Hour, TrackEvery: jobs.TrackEvery,
		Costs: costs.Default()}
}

// simulate runs c on each of t's seeds, each in a bubble of its own, and
// checks each history.
func simulate(t *testing.T, c Config) {
	t.Helper()
	for _, s := range seeds(t) {
		c.Seed = s
		t.Run(fmt.Sprintf("seed=%d", s), func(t *testing.T) { simulateOne(t, c) })
	}
}

// simulateOne runs c in a bubble of its own and checks its history.
func simulateOne(t *testing.T, c Config) {
	t.Helper()
	signalsOutside()
	c.Dir = t.TempDir()
	if keep := os.Getenv(keepEnv); keep != "" {
		c.Dir = filepath.Join(keep, t.Name())
		if err := os.MkdirAll(c.Dir, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("seed %d (%s=%d replays it), %d days from %s, regions %q", c.Seed, seedEnv, c.Seed, c.Days, c.Start.Format(time.DateOnly), c.Regions)
	synctest.Test(t, func(t *testing.T) {
		h, err := Simulate(c)
		if err != nil {
			t.Fatalf("seed %d: %v (log %s)", c.Seed, err, c.Dir)
		}
		for _, f := range Check(h) {
			t.Errorf("seed %d: %s", c.Seed, f)
		}
		t.Logf("seed %d: %d upstream calls, %d chart runs, %d restarts, %d upstream faults, %d quota refusals, %d wrong Dates, %d reads, %d searches, %d of the operator's; %s; %s",
			c.Seed, len(h.Calls), len(h.Runs), len(h.Down), len(h.Faults), len(h.Refusals), len(h.Skews), len(h.Served), len(h.Searched), len(h.Operator), Peaks(h), Work(h))
		for _, term := range h.Terms {
			if term.Held.At.IsZero() {
				t.Logf("SIGTERM %s: between passes (no chart page came in %s)", term.At.UTC().Format(time.RFC3339), termWait)
				continue
			}
			t.Logf("SIGTERM %s: page of %q on the wire (held %s), stored %t", term.At.UTC().Format(time.RFC3339),
				chartName(term.Held.Region, term.Held.Category), term.Hold.Round(time.Second), term.Stored)
		}
		for _, b := range h.Backfilled {
			t.Logf("backfill of %s %s to %s (--max-units %d) at %s: %d calls, %d search results, %v", b.Region, b.Since.Format(time.DateOnly),
				b.Until.Format(time.DateOnly), b.MaxUnits, b.From.UTC().Format(time.RFC3339), len(h.backfillCalls(b.Interval)), len(b.Results), b.Err)
		}
		for _, f := range h.Fulls {
			t.Logf("disk full %s-%s", f.From.UTC().Format(time.RFC3339), f.To.UTC().Format(time.TimeOnly))
		}
		for _, j := range h.Joins {
			t.Logf("run --once of %s beside the daemon from %s to %s: %d runs", j.Region, j.From.UTC().Format(time.RFC3339),
				j.To.UTC().Format(time.TimeOnly), len(j.Runs))
		}
		for _, s := range h.Skews {
			n := 0
			for _, c := range h.Calls {
				if s.Contains(c.At) {
					n++
				}
			}
			t.Logf("skew %s-%s: %d keyed calls", s.From.UTC().Format(time.RFC3339), s.To.UTC().Format(time.TimeOnly), n)
		}
		for _, s := range h.Unreachable {
			n := 0
			for _, c := range h.Unreached {
				if s.Contains(c.At) {
					n++
				}
			}
			t.Logf("cut off %s-%s: %d keyed calls refused at dial", s.From.UTC().Format(time.RFC3339), s.To.UTC().Format(time.TimeOnly), n)
		}
		for _, s := range h.Refusals {
			n := 0
			for _, c := range h.Calls {
				if s.Contains(c.At) {
					n++
				}
			}
			t.Logf("refusal %s-%s: %d keyed calls", s.From.UTC().Format(time.RFC3339), s.To.UTC().Format(time.TimeOnly), n)
		}
	})
}

// TestSimDay: a day of the daemon at the default regions with tracking,
// on the shipped pools, across the Pacific clocks going forward (Mar 14,
// 10:00 UTC): the pools' day of 23 hours. Every three hours the
// upstream's Date is an hour behind, and the process is stopped five
// minutes into it and started inside it (skewedStarts); once, between
// two of them, it is sent SIGTERM while a chart page is on the wire. The
// upstream takes a fifth of a second a call, as a real one does, so that
// a pass ends later than it starts.
func TestSimDay(t *testing.T) {
	simulate(t, Config{Shape: shipped(), Days: days(t, 1), Readers: true, SkewedStarts: skewedStarts(), Terms: []time.Duration{100 * time.Minute},
		Latency: 200 * time.Millisecond, Start: time.Date(2027, 3, 13, 12, 0, 0, 0, time.UTC)})
}

// skewedStarts are six wrong Dates of the upstream, three hours apart,
// each seven minutes later into the charts' hour than the one before, so
// that a start inside one meets a chart's slot in its life, held late by
// the Date, or a slot its downtime missed, caught up on the Date. Each
// begins 40 s into a minute: no slot is at the instant a Date turns wrong
// or right, or the process stops or starts, where which came first, and
// so whether a call met the wrong Date, would be the scheduler's call.
func skewedStarts() []time.Duration {
	var at []time.Duration
	for i := 1; i <= 6; i++ {
		at = append(at, time.Duration(i)*3*time.Hour+time.Duration(7*i-5)*time.Minute+40*time.Second)
	}
	return at
}

// TestSimNemesis: the default regions from a day before the Pacific
// clocks go back (Nov 1, 09:00 UTC: the pools' day of 25 hours), the
// process restarted on its database and the upstream failing in bursts as
// the seed draws them.
func TestSimNemesis(t *testing.T) {
	simulate(t, Config{Shape: shipped(), Days: days(t, 2), Nemesis: true, Readers: true,
		Start: time.Date(2026, 10, 31, 0, 0, 0, 0, time.UTC)})
}

// TestSimNemesisEveryRegion: the same at --regions all, readers asking
// for any region's chart, from three days before the Pacific clocks go
// back.
func TestSimNemesisEveryRegion(t *testing.T) {
	n := allDays(t)
	s := shipped()
	s.Regions = "all"
	simulate(t, Config{Shape: s, Days: n, Nemesis: true, Readers: true,
		Start: time.Date(2026, 10, 29, 0, 0, 0, 0, time.UTC)})
}

// allDays is INGEST_SIM_ALL_DAYS, the days of the runs at every region;
// without it they skip.
func allDays(t *testing.T) int {
	v := os.Getenv(allEnv)
	if v == "" {
		t.Skipf("a simulated day at every region costs up to a minute or more of CPU: %s=N (make sim) runs N days", allEnv)
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		t.Fatalf("%s: %q is not a number of days (1 or more)", allEnv, v)
	}
	return n
}

// TestSimShortPoolEveryRegion: every region tiered (the default regions
// whole and hourly, the others' top 50 every three hours) on a default
// pool of 1,500 units a day, short of the 1,584 they want: the pool holds
// tier 1 at its cadence beside tier 3 stretched, so tier 1 keeps it, from
// the day before the Pacific clocks go back.
func TestSimShortPoolEveryRegion(t *testing.T) {
	n := allDays(t)
	s := scarceAt(t, 1550, 50)
	s.Regions = "all:tier=3:depth=50,default:tier=1:depth=200"
	s.TrackFor = 0
	simulate(t, Config{Shape: s, Days: n, Nemesis: true, Readers: true,
		Start: time.Date(2026, 10, 31, 9, 0, 0, 0, time.UTC)})
}

// scarce is the shipped shape on a default pool that cannot hold the
// charts at --every: the limiter refuses, the pacer stretches them.
func scarce(t *testing.T) Shape { return scarceAt(t, 400, 50) }

// scarceAt is the shipped shape on a default pool of limit less reserve
// units a day.
func scarceAt(t *testing.T, limit, reserve int) Shape {
	return scarceOver(t, limit, reserve, 24*time.Hour)
}

// scarceOver is the shipped shape on a default pool of limit less reserve
// units over window and over each Pacific day.
func scarceOver(t *testing.T, limit, reserve int, window time.Duration) Shape {
	s := shipped()
	c, err := costs.Load("scarce.yaml", []byte(fmt.Sprintf(`pools:
  default: {limit: %d, reserve: %d, window: %s, day: America/Los_Angeles}
  search:  {limit: 100, reserve: 5,  window: 24h, day: America/Los_Angeles}
  stats:   {limit: 10000, reserve: 0, window: 24h, day: America/Los_Angeles}
operations:
  videos.list:          {default: 1}
  videoCategories.list: {default: 1}
  i18nRegions.list:     {default: 1}
  search.list:          {search: 1}
  videos.batchGetStats: {stats: 1}
`, limit, reserve, window)))
	if err != nil {
		t.Fatal(err)
	}
	s.Costs = c
	return s
}

// TestSimScarce: a day of the default regions on a default pool short of
// what the charts want: the upstream never counts more than the pool less
// its reserve in a window, and every chart keeps within --max-stale. (Under
// the nemesis a day's downtime can leave the pool short of its limit.)
func TestSimScarce(t *testing.T) {
	simulate(t, Config{Shape: scarce(t), Days: days(t, 1), Exhaust: true, Restarts: []time.Duration{20 * time.Hour},
		Start: time.Date(2026, 10, 25, 0, 0, 0, 0, time.UTC)})
}

// TestSimScarceUnpaced: the same with --pace=false, every chart at every
// slot: the limiter alone holds the pool, and refuses, with a second
// process beside the daemon on its database for a while, its `run
// --once` of another chart drawing on the same key. The operator reads
// /api/v1/quota meanwhile: a pool's free time while its window, not its
// day, is spent.
func TestSimScarceUnpaced(t *testing.T) {
	s := scarce(t)
	s.NoPace = true
	simulate(t, Config{Shape: s, Days: days(t, 1), Exhaust: true, Beside: true, Operator: true,
		Start: time.Date(2026, 10, 25, 0, 0, 0, 0, time.UTC)})
}

// TestSimTwoTiers: four of the default regions in two tiers (US and GB
// hourly, DE and FR every two hours) on a default pool of 260 units less
// 50 a day, which holds tier 1 hourly only beside tier 2 stretched: the
// plan holds tier 1 at its hour and stretches tier 2 alone, and tier 1
// keeps its hour. Restarted at noon, the process plans again on the
// pages it measured. The cheap shape with two tiers of weight, so that
// the drawn mutants meet a plan that holds one tier and stretches another.
func TestSimTwoTiers(t *testing.T) {
	s := scarceAt(t, 260, 50)
	s.Regions = "US,GB,DE:tier=2,FR:tier=2"
	s.TrackFor = 0
	simulate(t, Config{Shape: s, Days: days(t, 1), Restarts: []time.Duration{12 * time.Hour},
		Start: time.Date(2026, 10, 25, 0, 0, 0, 0, time.UTC)})
}

// TestSimPoolDay: with --pace=false, the default regions on a default
// pool whose day binds before its window (300 units less 50 over 6 hours
// and over each Pacific day), from Oct 31, 08:00 UTC, across the Pacific
// midnight into the day of 25 hours: the limiter alone holds the pool to
// the upstream's own day, which the upstream refuses past its limit
// until its midnight. A limiter that reads the day in another zone spends
// the pool again at that zone's midnight, on the upstream's same day. Two
// hours in, the daemon moves to a `db copy` of its database for three
// hours and comes back, where the pool's day is spent by what it spent on
// the copy too. The operator reads /api/v1/quota meanwhile: a pool's
// free time while its day, not its window, is spent. The charts' pages
// draw from a second pool besides (scarceTwoPools), 90 units less 10 over
// three hours and no calendar day: it binds between the default pool's
// resets, and holds more than the default a day.
func TestSimPoolDay(t *testing.T) {
	s := scarceTwoPools(t, 300, 50, 6*time.Hour, 90, 10, 3*time.Hour)
	s.NoPace = true
	simulate(t, Config{Shape: s, Days: days(t, 1), Exhaust: true, CopyAt: 2 * time.Hour, CopyFor: 3 * time.Hour, Operator: true,
		Start: time.Date(2026, 10, 31, 8, 0, 0, 0, time.UTC)})
}

// TestSimPacedPoolDay: TestSimPoolDay's pool paced (300 units less 50
// over 6 hours and over each Pacific day): the pacer's rate is the
// pool's over its day, not over its window, so the regions' own charts
// stretch evenly over the day and the day is never spent by morning,
// across the Pacific midnight into the day of 25 hours. Restarted in the
// evening, the process plans from what its database spent that day. It
// lives two days unless told otherwise: one from 08:00 UTC misses the
// first hour of the Pacific day it starts in, so no whole day of the
// pool's is seen spent to its limit. A run --once of another region on
// the key beside it (Beside), unpaced, spends the day before its
// midnight, so that a pass started on room the plan counted but a
// co-tenant spent shows.
func TestSimPacedPoolDay(t *testing.T) {
	s := scarceOver(t, 300, 50, 6*time.Hour)
	simulate(t, Config{Shape: s, Days: days(t, 2), Exhaust: true, Beside: true, Restarts: []time.Duration{11 * time.Hour},
		Start: time.Date(2026, 10, 31, 8, 0, 0, 0, time.UTC)})
}

// TestSimLong: forty days of one region's chart every six hours,
// undisturbed, from Dec 20 across the year's end, tracked at that cadence
// for three days (not the default --track-for, so that the flag is seen
// to reach tracking), backed up every five
// days keeping three: past the refresh's age (ingest.RefreshAfter), the terms' 30
// days, the prune's keep and the backups' keep, so that
// videos that left the chart come due and are fetched again, those the
// upstream forgot are found gone and deleted, and the prune deletes what
// the standing keeps no longer. INGEST_SIM_DAYS does not shorten it: its
// point is the horizon (INGEST_SIM_LONG_DAYS changes it).
func TestSimLong(t *testing.T) {
	s := shipped()
	s.Regions, s.Every, s.TrackFor, s.TrackEvery = "US", 6*time.Hour, 3*24*time.Hour, 6*time.Hour
	s.BackupEvery, s.BackupKeep = 5*24*time.Hour, 3
	n := longDays(t)
	// restarted past the terms' days, after the UTC midnight and before
	// the day's prune, the process meets a database its scheduled prune
	// has kept under the standing, and whose day past the standing's
	// statistics that prune has not yet taken: the prune's lag, not an
	// upgrade's data
	var restarts []time.Duration
	if at := time.Duration(n)*24*time.Hour - 22*time.Hour; at > 0 {
		restarts = append(restarts, at)
	}
	// started early on, as a release before the terms' note left the
	// database (holding nothing past the standing), the process notes it
	// and runs on
	var upgrades []time.Duration
	if at := 4*24*time.Hour + 9*time.Hour; at < time.Duration(n)*24*time.Hour-time.Hour {
		upgrades = append(upgrades, at)
	}
	simulate(t, Config{Shape: s, Days: n, Start: time.Date(2026, 12, 20, 0, 0, 0, 0, time.UTC), Restarts: restarts,
		Upgrades: upgrades, Backfills: backfilled()})
}

// backfilled is one backfill of the US videos published over eight months
// of the fake's archive, before any chart's, run three times between the
// chart's slots: stopped at its first page by --max-units, resumed to its
// end a day later, and once more, complete, a day after that: its results
// are fetched again by the refresh while they are kept, and go with the
// terms' days.
func backfilled() []Backfill {
	b := Backfill{At: 2 * time.Hour, Region: "US", Since: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC),
		Until: time.Date(2026, 9, 1, 0, 0, 0, 0, time.UTC), MaxUnits: 2}
	resumed, again := b, b
	resumed.At, resumed.MaxUnits = 26*time.Hour, 0
	again.At, again.MaxUnits = 50*time.Hour, 0
	return []Backfill{b, resumed, again}
}

// longDays is INGEST_SIM_LONG_DAYS, or forty: past every long timer.
func longDays(t *testing.T) int {
	v := os.Getenv(longEnv)
	if v == "" {
		return 40
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		t.Fatalf("%s: %q is not a number of days (1 or more)", longEnv, v)
	}
	return n
}

// TestSimTrackingEverySlot: at --track-every 5m, with an upstream that
// takes three seconds a call (a pass longer than a stagger step), tracking
// reads the counts at every slot. Its first three minutes the upstream
// answers in twelve (SlowStart): the fresh database's first start reads
// the upstream's clock before each call's bound, never within it. The
// charts' default pool, none of tracking's, is 650 units a day, which
// holds the regions' own charts at --every and their category charts of
// music (--categories 10) only stretched: a category chart waits for
// room beside a round of the own charts.
func TestSimTrackingEverySlot(t *testing.T) {
	s := scarceAt(t, 700, 50)
	s.Categories = []string{"", "10"}
	s.TrackEvery = 5 * time.Minute
	simulate(t, Config{Shape: s, Days: days(t, 1), Latency: 3 * time.Second, SlowStart: 3 * time.Minute,
		Start: time.Date(2026, 10, 25, 0, 0, 0, 0, time.UTC)})
}

// tiered is every region tiered (the default regions whole and hourly,
// the others' top 50 every three hours) at --max-stale 3h on a default
// pool of units a day, tracking off.
func tiered(t *testing.T, units int) Shape {
	s := scarceAt(t, units+50, 50)
	s.Regions = "all:tier=3:depth=50,default:tier=1:depth=200"
	s.MaxStale = 3 * time.Hour
	s.TrackFor = 0
	return s
}

// TestSimTieredPool: every region tiered at --max-stale 3h on a default
// pool of 1,500 units a day, across the Pacific day of 25 hours (from
// the day the clocks go back): tier 1 keeps the cadence the plan told,
// plus a slot.
func TestSimTieredPool(t *testing.T) {
	n := allDays(t)
	simulate(t, Config{Shape: tiered(t, 1500), Days: n, Readers: true,
		Start: time.Date(2026, 10, 31, 9, 0, 0, 0, time.UTC)})
}

// TestSimTieredPoolShort: the same on a default pool of 1,200 units a
// day, which cannot hold tier 1 hourly beside tier 3 at --max-stale: the
// plan says so at start, and tier 1 keeps the cadence it told, plus a
// slot.
func TestSimTieredPoolShort(t *testing.T) {
	n := allDays(t)
	simulate(t, Config{Shape: tiered(t, 1200), Days: n, Readers: true,
		Start: time.Date(2026, 10, 31, 9, 0, 0, 0, time.UTC)})
}

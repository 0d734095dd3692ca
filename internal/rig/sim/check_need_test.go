package sim

import (
	"strings"
	"testing"
	"time"

	"github.com/ingestworks/ingest/costs"
	"github.com/ingestworks/ingest/regions"
)

// quiet is a history of one tier-1 chart at --every 1h, tracking hourly,
// on the shipped pools, from the day before the Pacific clocks go back,
// with the calls given.
func quiet(days int, calls ...Call) *History {
	start := time.Date(2026, 10, 31, 0, 0, 0, 0, time.UTC)
	return &History{Config: Config{Shape: Shape{Every: time.Hour, MaxStale: 24 * time.Hour, TrackFor: time.Hour, TrackEvery: time.Hour,
		Costs: costs.Default()}, Start: start, Days: days}, End: start.Add(time.Duration(days) * 24 * time.Hour), Starts: []time.Time{start},
		Charts: []regions.Chart{{Code: "US", Tier: 1, Depth: 50}}, Calls: calls}
}

func utc(s string) time.Time {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		panic(err)
	}
	return t
}

// charged is a call of the default pool at at, the fake's count after it
// being so far.
func charged(at string, status int, so int64) Call {
	return Call{At: utc(at), Path: "/youtube/v3/videos", Status: status, Kind: KindOther, Charged: map[string]int64{"default": so}}
}

func findings(fs []string, want string) bool {
	for _, f := range fs {
		if strings.Contains(f, want) {
			return true
		}
	}
	return false
}

// The upstream's Nov 1 runs from 07:00 UTC to 08:00 UTC the day after:
// what it charged in its first hour and its last is one day's.
func TestCheckHoldsTheUpstreamsDayOf25Hours(t *testing.T) {
	over := quiet(3, charged("2026-11-01T07:30:00Z", 200, 5000), charged("2026-11-02T07:30:00Z", 200, 10000))
	if fs := checkUpstreamDays(over); !findings(fs, "on its day of 2026-11-01 (25h0m0s long)") {
		t.Errorf("9,500 a day, 10,000 charged in the upstream's Nov 1: %q", fs)
	}
	next := quiet(3, charged("2026-11-01T07:30:00Z", 200, 5000), charged("2026-11-02T08:30:00Z", 200, 10000))
	if fs := checkUpstreamDays(next); len(fs) > 0 {
		t.Errorf("5,000 on each of two upstream days: %q", fs)
	}
}

// After the upstream refused the default pool on its Nov 1, a call of that
// pool before 08:00 UTC the day after is one too many; one after is not.
func TestCheckFindsARefusedPoolCalledBeforeItsReset(t *testing.T) {
	early := quiet(3, charged("2026-11-01T10:00:00Z", 403, 1), charged("2026-11-02T07:30:00Z", 200, 2))
	if fs := checkRefusedUntilReset(early); !findings(fs, "pool default refused at 2026-11-01T10:00:00Z, called again at 07:30:00") {
		t.Errorf("called at 07:30 UTC, before the Pacific midnight of the 25-hour day: %q", fs)
	}
	after := quiet(3, charged("2026-11-01T10:00:00Z", 403, 1), charged("2026-11-02T08:00:01Z", 200, 2))
	if fs := checkRefusedUntilReset(after); len(fs) > 0 {
		t.Errorf("called after the reset: %q", fs)
	}
	stats := quiet(3, Call{At: utc("2026-11-01T10:00:00Z"), Path: "/youtube/v3/videos:batchGetStats", Status: 429, Charged: map[string]int64{"stats": 1}},
		charged("2026-11-01T11:00:00Z", 200, 1))
	if fs := checkRefusedUntilReset(stats); len(fs) > 0 {
		t.Errorf("the stats pool refused, the default pool called: %q", fs)
	}
}

// Each kind of work asked for again before it is due is a finding: the
// category names within a day, a chart's page within its cadence, a
// video by id before its age, a tracking batch within half a slot.
func TestCheckFindsWorkDoneBeforeItIsDue(t *testing.T) {
	cats := func(at string) Call {
		return Call{At: utc(at), Status: 200, Kind: KindCategories, Region: "US"}
	}
	page := func(at string) Call {
		return Call{At: utc(at), Status: 200, Kind: KindChart, Region: "US", Page: "tok2"}
	}
	byID := func(at string) Call {
		return Call{At: utc(at), Status: 200, Kind: KindByID, IDs: []string{"a", "b"}}
	}
	batch := func(at string) Call {
		return Call{At: utc(at), Status: 200, Kind: KindStats, First: "a"}
	}
	for _, tc := range []struct {
		name       string
		soon, late [2]Call
		want       string
	}{
		{"categories", [2]Call{cats("2026-10-31T01:00:00Z"), cats("2026-10-31T03:00:00Z")},
			[2]Call{cats("2026-10-31T01:00:00Z"), cats("2026-11-01T01:00:01Z")}, "category names were asked again within a day"},
		{"page", [2]Call{page("2026-10-31T01:00:00Z"), page("2026-10-31T01:10:00Z")},
			[2]Call{page("2026-10-31T01:00:00Z"), page("2026-10-31T02:00:00Z")}, `US page "tok2" at 2026-10-31T01:00:00Z and 01:10:00`},
		{"refresh", [2]Call{byID("2026-10-31T01:00:00Z"), byID("2026-11-01T01:00:00Z")},
			[2]Call{byID("2026-10-31T01:00:00Z"), byID("2026-11-21T01:00:00Z")}, "the refresh fetched a video again before its text was"},
		{"tracking", [2]Call{batch("2026-10-31T01:00:00Z"), batch("2026-10-31T01:20:00Z")},
			[2]Call{batch("2026-10-31T01:00:00Z"), batch("2026-10-31T02:00:00Z")}, "tracking asked a batch's counts again within half a slot"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if fs := checkNeed(quiet(30, tc.soon[:]...)); !findings(fs, tc.want) {
				t.Errorf("asked again at %s: %q, want %q", tc.soon[1].At.Format(time.RFC3339), fs, tc.want)
			}
			if fs := checkNeed(quiet(30, tc.late[:]...)); len(fs) > 0 {
				t.Errorf("asked again at %s, when due: %q", tc.late[1].At.Format(time.RFC3339), fs)
			}
			cut := tc.soon
			cut[0].Cut = true
			if fs := checkNeed(quiet(30, cut[:]...)); len(fs) > 0 {
				t.Errorf("the first answer cut short, asked again: %q", fs)
			}
		})
	}
}

// A history long enough for the refresh to have work, in which it
// fetched nothing, never exercised it; one in which the upstream forgot a
// video long enough ago, and nothing was deleted as gone, never exercised
// the terms' deletes.
func TestCheckFindsALongHistoryThatGaveTheRefreshNoWork(t *testing.T) {
	h := quiet(40, charged("2026-10-31T01:00:00Z", 200, 1))
	h.Forgotten = []Gone{{At: utc("2026-10-31T01:00:00Z"), ID: "a"}}
	fs := checkExercised(h)
	if !findings(fs, "the refresh fetched nothing") || !findings(fs, "the terms' deletes were not exercised") {
		t.Errorf("forty days, no refresh, nothing deleted: %q", fs)
	}
	h.Calls = append(h.Calls, Call{At: utc("2026-11-25T01:00:00Z"), Status: 200, Kind: KindByID, IDs: []string{"a"}})
	h.Tombstones = map[string]time.Time{"a": utc("2026-11-25T01:00:00Z")}
	if fs := checkExercised(h); len(fs) > 0 {
		t.Errorf("the refresh fetched, the forgotten video deleted: %q", fs)
	}
	if fs := checkExercised(quiet(2, charged("2026-10-31T01:00:00Z", 200, 1))); len(fs) > 0 {
		t.Errorf("two days, short of the refresh's age: %q", fs)
	}
}

// With --backup-every, the folder at the end holds --backup-keep backups,
// a period apart, the newest within a period of the end.
func TestCheckHoldsTheBackupsToTheirSchedule(t *testing.T) {
	h := quiet(40)
	h.BackupEvery, h.BackupKeep = 5*24*time.Hour, 3
	for _, d := range []int{30, 35, 40} {
		h.Backups = append(h.Backups, h.Start.Add(time.Duration(d)*24*time.Hour))
	}
	if fs := checkBackups(h); len(fs) > 0 {
		t.Errorf("three kept, five days apart, the last at the end: %q", fs)
	}
	all := quiet(40)
	all.BackupEvery, all.BackupKeep = h.BackupEvery, h.BackupKeep
	for d := 0; d <= 40; d += 5 {
		all.Backups = append(all.Backups, all.Start.Add(time.Duration(d)*24*time.Hour))
	}
	if fs := checkBackups(all); !findings(fs, "9 backups are left at the end, where --backup-keep 3 keeps 3") {
		t.Errorf("every backup kept: %q", fs)
	}
	late := quiet(40)
	late.BackupEvery, late.BackupKeep = h.BackupEvery, h.BackupKeep
	for _, d := range []int{20, 25, 30} {
		late.Backups = append(late.Backups, late.Start.Add(time.Duration(d)*24*time.Hour))
	}
	if fs := checkBackups(late); !findings(fs, "240h0m0s before the end, over --backup-every") {
		t.Errorf("none in the last ten days: %q", fs)
	}
}

// A slot a wrong Date held back passes late, within its slot, and the
// next slot's pass comes sooner than a cadence after it: its page was not
// fetched twice for nothing. With nothing holding it back, it was.
func TestCheckLetsAPassHeldBackBeFollowedByTheNextSlots(t *testing.T) {
	page := func(at string) Call {
		return Call{At: utc(at), Status: 200, Kind: KindChart, Region: "US"}
	}
	calls := []Call{page("2026-10-31T20:07:30Z"), page("2026-10-31T21:22:45Z"), page("2026-10-31T22:07:30Z")}
	if fs := checkNeed(quiet(2, calls...)); !findings(fs, "44m45s later") {
		t.Errorf("a pass at 21:22:45 with nothing holding it back, the next at 22:07:30: %q", fs)
	}
	held := quiet(2, calls...)
	held.Skews = []Interval{{utc("2026-10-31T20:50:00Z"), utc("2026-10-31T21:10:00Z")}}
	if fs := checkNeed(held); len(fs) > 0 {
		t.Errorf("the 21:07:30 slot held back by a wrong Date until 21:22:45: %q", fs)
	}
}

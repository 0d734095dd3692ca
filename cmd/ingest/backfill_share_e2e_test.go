package main

import (
	"context"
	"encoding/json"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ingestworks/ingest/ledger"
	"github.com/ingestworks/ingest/store"
)

// A backfill given no --max-units takes only what the daemon's plan leaves
// in the pools until the reset: it says so as it starts and in --dry-run,
// stops at that share with the schedule still fitting, and once nothing is left
// calls nothing: of a region the daemon runs, and of one it does not
// (whose spend is no co-tenant's that the plan would shrink to leave room
// for).
func TestBackfillTakesWhatThePlanLeaves(t *testing.T) {
	t.Parallel()
	for _, region := range []string{"US", "DE"} {
		t.Run(region, func(t *testing.T) {
			t.Parallel()
			backfillTakesWhatThePlanLeaves(t, region)
		})
	}
}

func backfillTakesWhatThePlanLeaves(t *testing.T, region string) {
	h := newHarness(t)
	h.tightCosts(20)
	h.mustRun(0, "run", "--once", "--regions", "US")
	db, err := store.Open(context.Background(), h.db())
	if err != nil {
		t.Fatal(err)
	}
	// The daemon's schedule: US three times by the pool's horizon, a day.
	if err := ledger.New(db).SaveSchedule(context.Background(), ledger.Schedule{Every: 8 * time.Hour, Regions: []string{"US"}, Updated: time.Now()}); err != nil {
		t.Fatal(err)
	}
	db.Close()
	args := []string{"backfill", "--region", region, "--since", "2025-11-01", "--until", "2026-11-01"}
	share := regexp.MustCompile(`the daemon's plan leaves .* units of the next .*: taking at most (\d+) units, (\d+) pages`)

	dry := h.mustRun(0, append(args, "--dry-run")...)
	m := share.FindStringSubmatch(dry.stdout)
	if m == nil {
		t.Fatalf("--dry-run does not give the plan's share:\n%s", dry)
	}
	units, _ := strconv.Atoi(m[1])
	pages, _ := strconv.Atoi(m[2])
	if pages <= 0 || pages >= 10 || units != 2*pages || !strings.Contains(dry.stdout, "at most "+m[2]+" pages") {
		t.Fatalf("--dry-run plans %d pages for %d units; want fewer than the search's 10, a page 2 units:\n%s", pages, units, dry)
	}

	first := h.mustRun(0, args...)
	if !share.MatchString(first.stdout) || !strings.Contains(first.stdout, "the share the daemon's plan leaves") {
		t.Errorf("the backfill does not say it takes, and stopped at, the plan's share:\n%s", first)
	}
	got := queryInt(t, openDB(t, h.db()), `SELECT max(pages) FROM backfill_cursors`)
	if got != int64(pages) {
		t.Errorf("backfill stored %d pages, want the %d the plan left room for\n%s", got, pages, first)
	}
	var rep struct {
		Pace struct {
			Pools []struct {
				Pool   string `json:"pool"`
				Budget int64  `json:"budget_units"`
				Fixed  int64  `json:"fixed_units"`
			} `json:"pools"`
		} `json:"pace"`
	}
	out := h.mustRun(0, "report", "--json")
	if err := json.Unmarshal([]byte(out.stdout), &rep); err != nil {
		t.Fatalf("report --json: %v\n%s", err, out)
	}
	for _, p := range rep.Pace.Pools {
		// The schedule fits the pool at its floor before the backfill; it
		// must still (to a unit's rounding) after it.
		if p.Pool == "default" && p.Budget+1 < p.Fixed {
			t.Errorf("after the backfill the plan has %d units for the schedule's %d at --every: the backfill took the daemon's", p.Budget, p.Fixed)
		}
	}

	t.Logf("%s\n%s", dry.stdout, first.stdout)
	before := h.fake.Requests()
	second := h.mustRun(0, args...)
	if !strings.Contains(second.stdout, "not one page") || !strings.Contains(second.stdout, "nothing was called") {
		t.Errorf("with the plan's share spent, the backfill does not say it calls nothing:\n%s", second)
	}
	t.Logf("%s", second.stdout)
	if n := h.fake.Requests() - before; n != 0 {
		t.Errorf("the backfill sent %d requests with nothing left to it, want 0", n)
	}
}

package report_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ingestworks/ingest/clock"
	"github.com/ingestworks/ingest/costs"
	"github.com/ingestworks/ingest/internal/rig/passtest"
	"github.com/ingestworks/ingest/internal/rig/storetest"
	"github.com/ingestworks/ingest/jobs"
	"github.com/ingestworks/ingest/regions"
	"github.com/ingestworks/ingest/report"
	"github.com/ingestworks/ingest/store"
	"github.com/ingestworks/ingest/wiring"
)

// fetchedReport is the report of a store the passes filled with the US
// and GB charts.
func fetchedReport(t *testing.T) *report.Report {
	t.Helper()
	db := storetest.Open(t)
	passtest.Fill(t, db, "US", "GB")
	return reportOf(t, db)
}

// reportOf is the report `ingest report` builds over db with no flags,
// the embedded limiter read without spending.
func reportOf(t *testing.T, sdb *store.DB) *report.Report {
	t.Helper()
	ctx := context.Background()
	db := wiring.On(sdb, "")
	h := &wiring.Host{Clock: clock.System, Costs: costs.Default(), Logger: slog.New(slog.DiscardHandler)}
	src := report.Sources{Now: time.Now(), DB: db, Costs: h.Costs, ScheduleFrom: "--every", Size: db.Size, Held: wiring.HeldIn(db)}
	sch := wiring.Schedule{Timetable: jobs.Timetable{Charts: regions.Charts(regions.Default...), Every: time.Hour}}
	if err := wiring.Follow(ctx, sch, db, &src); err != nil {
		t.Fatal(err)
	}
	var err error
	if src.QuotaKey, err = h.ReadQuotaKey(ctx, "", "", db); err != nil {
		t.Fatal(err)
	}
	l, closeLimiter, err := h.ReadLimiter(db, src.QuotaKey, h.Costs)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(closeLimiter)
	src.Limiter = l
	rep, err := wiring.BuildReport(ctx, src)
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// TestReportHasTheDesignFields: the report of fetched charts holds every
// field docs/contract.md lists, each pool's units, each operation's calls,
// each region's run, and the upstream's next reset.
func TestReportHasTheDesignFields(t *testing.T) {
	t.Parallel()
	rep := fetchedReport(t)
	js, err := json.Marshal(rep.JSON())
	if err != nil {
		t.Fatal(err)
	}
	var raw map[string]any
	if err := json.Unmarshal(js, &raw); err != nil {
		t.Fatalf("report's JSON: %v\n%s", err, js)
	}
	requireKeys(t, "report", raw, "quota_key", "backend", "pools", "operations", "regions", "upstream_reset")
	for _, p := range raw["pools"].([]any) {
		requireKeys(t, "pools[]", p.(map[string]any), "name", "limit", "reserve", "used", "remaining", "free_at", "blocked_until")
	}
	for _, o := range raw["operations"].([]any) {
		requireKeys(t, "operations[]", o.(map[string]any), "op", "calls", "units")
	}
	for _, r := range raw["regions"].([]any) {
		requireKeys(t, "regions[]", r.(map[string]any), "code", "name", "status", "last_run", "videos", "units", "next_run")
	}

	var text bytes.Buffer
	rep.Text(&text, time.Local)
	if s := text.String(); !strings.HasSuffix(s, "\n") {
		t.Errorf("report's text does not end with a newline (the shell prompt lands on its last line): ...%q", s[max(0, len(s)-60):])
	}

	if rep.Backend != "sqlite" {
		t.Errorf("backend %q: want sqlite", rep.Backend)
	}
	checkFetchedPools(t, rep)
	checkFetchedRegions(t, rep)
	reset, err := time.Parse(time.RFC3339, rep.JSON().UpstreamReset)
	la, _ := time.LoadLocation("America/Los_Angeles")
	if err != nil || !reset.After(time.Now()) || reset.After(time.Now().Add(25*time.Hour)) || reset.In(la).Hour() != 0 || reset.In(la).Minute() != 0 {
		t.Errorf("upstream_reset %q: want the next midnight in America/Los_Angeles", rep.JSON().UpstreamReset)
	}
}

// checkFetchedPools: the two passes' units in the default pool, by
// operation.
func checkFetchedPools(t *testing.T, rep *report.Report) {
	t.Helper()
	j := rep.JSON()
	var found bool
	for _, p := range j.Pools {
		if p.Name != "default" {
			continue
		}
		found = true
		if p.Used != 8 || p.Limit != 10000 || p.Reserve != 500 || p.Remaining != 9492 || p.FreeAt != nil || p.BlockedUntil != nil {
			t.Errorf("pool default: used %d limit %d reserve %d remaining %d free_at %v blocked_until %v; want 8 10000 500 9492 null null",
				p.Used, p.Limit, p.Reserve, p.Remaining, p.FreeAt, p.BlockedUntil)
		}
	}
	if !found {
		t.Errorf("no pool default in %+v", j.Pools)
	}
	ops := map[string][2]int64{}
	for _, o := range j.Operations {
		ops[o.Op] = [2]int64{int64(o.Calls), o.Units}
	}
	if ops["videos.list"] != [2]int64{6, 6} || ops["videoCategories.list"] != [2]int64{2, 2} {
		t.Errorf("operations %v, want videos.list 6 calls 6 units, videoCategories.list 2 calls 2 units", ops)
	}
}

// checkFetchedRegions: the regions the store holds, by code, each with its
// run.
func checkFetchedRegions(t *testing.T, rep *report.Report) {
	t.Helper()
	want := map[string][3]int64{"US": {200, 5}, "GB": {77, 3}}
	var codes []string
	for _, r := range rep.JSON().Regions {
		codes = append(codes, r.Code)
		if w, ok := want[r.Code]; ok {
			if r.Status != "completed" || int64(r.Videos) != w[0] || r.Units != w[1] || r.LastRun == nil || r.NextRun == nil {
				t.Errorf("region %s: %+v, want completed, %d videos, %d units, last_run and next_run set", r.Code, r, w[0], w[1])
			}
		} else if r.Status != "never" || r.LastRun != nil {
			t.Errorf("region %s: status %q last_run %v, want never and null", r.Code, r.Status, r.LastRun)
		}
	}
	if want := []string{"GB", "US"}; !slices.Equal(codes, want) {
		t.Errorf("regions %v, want the regions the database holds, by code, %v (no daemon recorded a schedule)", codes, want)
	}
}

func requireKeys(t *testing.T, what string, m map[string]any, keys ...string) {
	t.Helper()
	for _, k := range keys {
		if _, ok := m[k]; !ok {
			t.Errorf("%s has no field %q: %v", what, k, m)
		}
	}
}

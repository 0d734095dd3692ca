package report_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"testing"
	"time"

	"github.com/ingestworks/ingest/clock"
	"github.com/ingestworks/ingest/costs"
	"github.com/ingestworks/ingest/internal/rig/storetest"
	"github.com/ingestworks/ingest/jobs"
	"github.com/ingestworks/ingest/regions"
	"github.com/ingestworks/ingest/report"
)

// planLogs runs the day's plan of r on a new database and returns the
// lines it logged of msg.
func planLogs[T any](t *testing.T, r report.PlanRun, msg string) []T {
	t.Helper()
	var logs bytes.Buffer
	plan, err := report.MakeDayPlan(context.Background(), costs.Default(), storetest.Open(t), clock.System.Now(), r)
	if err != nil {
		t.Fatal(err)
	}
	plan.Say(slog.New(slog.NewJSONHandler(&logs, nil)))
	var out []T
	for dec := json.NewDecoder(&logs); ; {
		var line struct {
			Msg string `json:"msg"`
		}
		var v T
		raw := json.RawMessage{}
		if dec.Decode(&raw) != nil {
			return out
		}
		if json.Unmarshal(raw, &line) == nil && line.Msg == msg && json.Unmarshal(raw, &v) == nil {
			out = append(out, v)
		}
	}
}

// TestPlanCountsTracking checks that the daemon's plan line charges
// tracking to the stats pool: before the charts hold any video, a
// batchGetStats call per 50 of the charts' videos every --track-every,
// and nothing when tracking is off.
func TestPlanCountsTracking(t *testing.T) {
	t.Parallel()
	charts := int64(len(regions.Default))
	for _, c := range []struct {
		name      string
		track     time.Duration
		wantStats int64
	}{
		{"tracking", 7 * 24 * time.Hour, charts * 4 * 24}, // charts of 4 pages each: 200 videos, 4 calls an hour each
		{"off", 0, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := report.PlanRun{Timetable: jobs.Timetable{Charts: regions.Charts(regions.Default...), Categories: []string{""}, Every: time.Hour},
				Track: c.track, TrackEvery: jobs.TrackEvery}
			got := map[string]int64{}
			for _, l := range planLogs[struct {
				Pool  string `json:"pool"`
				Units int64  `json:"units_per_day"`
			}](t, r, "plan") {
				got[l.Pool] = l.Units
			}
			if got["stats"] != c.wantStats || got["default"] != charts*4*24+charts {
				t.Errorf("units_per_day %v, want stats %d and default %d", got, c.wantStats, charts*4*24+charts)
			}
		})
	}
}

// TestPlanPrintsEachTier checks the lines run prints per tier at start:
// the shipped pools hold the default regions whole and hourly beside every
// other region's top 50 every three hours, and nothing is dropped.
func TestPlanPrintsEachTier(t *testing.T) {
	t.Parallel()
	charts, err := regions.Parse("all:tier=3:depth=50,default:tier=1:depth=200", regions.Builtin)
	if err != nil {
		t.Fatal(err)
	}
	type tier struct {
		Tier    int    `json:"tier"`
		Regions int    `json:"regions"`
		Every   string `json:"every"`
		Depth   string `json:"depth"`
		Units   int    `json:"units_per_day"`
		Dropped string `json:"dropped"`
	}
	r := report.PlanRun{Timetable: jobs.Timetable{Charts: charts, Categories: []string{""}, Every: time.Hour, MaxStale: 24 * time.Hour}}
	got := map[int]tier{}
	for _, l := range planLogs[tier](t, r, "plan tier") {
		got[l.Tier] = l
	}
	others := len(regions.Builtin) - len(regions.Default)
	want := map[int]tier{
		1: {1, len(regions.Default), "1h", "200", len(regions.Default) * 4 * 24, "none"},
		3: {3, others, "3h", "50", others * 8, "none"},
	}
	if len(got) != len(want) || got[1] != want[1] || got[3] != want[3] {
		t.Errorf("plan tier lines %+v, want %+v", got, want)
	}
}

// A plan is made again only for other charts than it was made for.
func TestDayPlanForOtherChartsIsMadeAgain(t *testing.T) {
	t.Parallel()
	us := regions.Charts("US")
	plan, err := report.MakeDayPlan(context.Background(), costs.Default(), storetest.Open(t), clock.System.Now(),
		report.PlanRun{Timetable: jobs.Timetable{Charts: us, Categories: []string{""}, Every: time.Hour}})
	if err != nil {
		t.Fatal(err)
	}
	remade := 0
	remake := func() (*report.DayPlan, error) { remade++; return nil, nil }
	if got, err := plan.For(regions.Charts("US"), remake); got != plan || err != nil || remade != 0 {
		t.Errorf("the same charts: %p (%v), made again %d times; want the plan kept", got, err, remade)
	}
	if _, err := plan.For(regions.Charts("US", "GB"), remake); err != nil || remade != 1 {
		t.Errorf("other charts: made again %d times (%v), want once", remade, err)
	}
}

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"path/filepath"
	"testing"
	"time"

	"github.com/ingestworks/ingest/costs"
	"github.com/ingestworks/ingest/jobs"
	"github.com/ingestworks/ingest/regions"
)

// TestPlanCountsTracking checks that the daemon's plan line charges
// tracking to the stats pool: with no database yet, a batchGetStats call
// per 50 of the charts' videos every --track-every, and nothing when
// tracking is off.
func TestPlanCountsTracking(t *testing.T) {
	t.Parallel()
	charts := int64(len(regions.Default))
	for _, c := range []struct {
		name      string
		trackFor  string
		wantStats int64
	}{
		{"tracking", "7d", charts * 4 * 24}, // charts of 4 pages each: 200 videos, 4 calls an hour each
		{"off", "0", 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			var logs bytes.Buffer
			s := &settings{db: filepath.Join(t.TempDir(), "none.db"), costs: costs.Default(),
				logger: slog.New(slog.NewJSONHandler(&logs, nil))}
			f := &runFlags{every: time.Hour, cats: []string{""},
				track: trackFlags{forText: c.trackFor, every: jobs.TrackEvery}}
			if err := checkPlan(context.Background(), s, f, regions.Charts(regions.Default...)); err != nil {
				t.Fatal(err)
			}
			got := map[string]int64{}
			for dec := json.NewDecoder(&logs); ; {
				var line struct {
					Msg   string `json:"msg"`
					Pool  string `json:"pool"`
					Units int64  `json:"units_per_day"`
				}
				if dec.Decode(&line) != nil {
					break
				}
				if line.Msg == "plan" {
					got[line.Pool] = line.Units
				}
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
	var logs bytes.Buffer
	s := &settings{db: filepath.Join(t.TempDir(), "none.db"), costs: costs.Default(),
		logger: slog.New(slog.NewJSONHandler(&logs, nil))}
	f := &runFlags{every: time.Hour, maxStale: 24 * time.Hour, cats: []string{""}}
	charts, err := parseRegions("all:tier=3:depth=50,default:tier=1:depth=200", true, regions.Builtin)
	if err != nil {
		t.Fatal(err)
	}
	if err := checkPlan(context.Background(), s, f, charts); err != nil {
		t.Fatal(err)
	}
	type tier struct {
		Regions int    `json:"regions"`
		Every   string `json:"every"`
		Depth   string `json:"depth"`
		Units   int    `json:"units_per_day"`
		Dropped string `json:"dropped"`
	}
	got := map[int]tier{}
	for dec := json.NewDecoder(&logs); ; {
		var line struct {
			Msg  string `json:"msg"`
			Tier int    `json:"tier"`
			tier
		}
		if dec.Decode(&line) != nil {
			break
		}
		if line.Msg == "plan tier" {
			got[line.Tier] = line.tier
		}
	}
	others := len(regions.Builtin) - len(regions.Default)
	want := map[int]tier{
		1: {len(regions.Default), "1h", "200", len(regions.Default) * 4 * 24, "none"},
		3: {others, "3h", "50", others * 8, "none"},
	}
	if len(got) != len(want) || got[1] != want[1] || got[3] != want[3] {
		t.Errorf("plan tier lines %+v, want %+v\n%s", got, want, logs.String())
	}
}

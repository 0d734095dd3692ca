package report

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/costs"
	"github.com/ingestworks/ingest/jobs"
	"github.com/ingestworks/ingest/regions"
	"github.com/ingestworks/ingest/store"
)

// The tier lines are computed from the costs the pool's plan line counts:
// charts of 200 videos whose last passes read one page each cost a page a
// pass in both, not the four pages of their depth in one of them.
func TestTierLinesCountTheMeasuredPages(t *testing.T) {
	t.Parallel()
	s := Schedule{Timetable: jobs.Timetable{Charts: regions.Charts(regions.Default...), Every: time.Hour},
		Last: map[string]store.RunSummary{}}
	for _, code := range regions.Default {
		s.Last[code] = store.RunSummary{Region: code, Status: ingest.StatusCompleted, Pages: 1}
	}
	c := costs.Default()
	var logs bytes.Buffer
	log := slog.New(slog.NewTextHandler(&logs, nil))
	plan := Plan(c, s, nil)
	LogPlan(log, plan)
	LogTiers(log, Tiers(c, s))
	var pages int
	for _, p := range plan {
		if p.Pool == ingest.DefaultPool {
			pages = p.Pages
		}
	}
	want := "units_per_day=192 " // 8 charts of a page, hourly
	if pages != len(regions.Default) || !strings.Contains(logs.String(), "msg=\"plan tier\" tier=1") || !strings.Contains(logs.String(), want) {
		t.Errorf("the plan counts %d pages a cycle; want 8, and a tier line of %q:\n%s", pages, want, logs.String())
	}
}

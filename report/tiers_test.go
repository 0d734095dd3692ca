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

// A tier the pool cannot hold at its cadence beside the tiers below it at
// --max-stale is said, and by how much: at start (a warning after the
// tier lines), in the report's text and in its JSON (`report --json`,
// /quota). A tier held at its cadence is said nowhere.
func TestTiersSayTheTierThePoolCannotHold(t *testing.T) {
	t.Parallel()
	charts := regions.Charts(regions.Default...)
	for i := range charts {
		charts[i].Tier, charts[i].Depth = 1, 200
	}
	for _, code := range []string{"JP", "KR", "MX", "NL"} {
		charts = append(charts, regions.Chart{Code: code, Tier: 3, Depth: 50})
	}
	s := Schedule{Timetable: jobs.Timetable{Charts: charts, Every: time.Hour, MaxStale: 3 * time.Hour}}
	// tier 1: 768 units a day hourly; tier 3 at its cadence 32, the
	// category names 12: 384 left for tier 1, every 2h
	c, err := costs.Load("tiers.yaml", []byte(`pools:
  default: {limit: 428, reserve: 0, window: 24h, day: America/Los_Angeles}
  search:  {limit: 100, reserve: 0, window: 24h, day: America/Los_Angeles}
  stats:   {limit: 10000, reserve: 0, window: 24h, day: America/Los_Angeles}
operations:
  videos.list:          {default: 1}
  videoCategories.list: {default: 1}
  i18nRegions.list:     {default: 1}
  search.list:          {search: 1}
  videos.batchGetStats: {stats: 1}
`))
	if err != nil {
		t.Fatal(err)
	}
	tiers := Tiers(c, s)
	if len(tiers) != 2 || tiers[0].Stretch() != 2 || tiers[1].Stretch() != 1 || tiers[1].Unheld() != "" {
		t.Fatalf("tiers %+v: want tier 1 twice its cadence, tier 3 at it", tiers)
	}
	const want = "the pool cannot hold tier 1 at its cadence (1h) beside the tiers below it at --max-stale: its charts run every 2h, 2.00 times it"
	var logs bytes.Buffer
	LogTiers(slog.New(slog.NewTextHandler(&logs, nil)), tiers)
	if !strings.Contains(logs.String(), `level=WARN msg="`+want+`" tier=1 times_its_cadence=2`) || strings.Count(logs.String(), "level=WARN") != 1 {
		t.Errorf("the start's lines: want one warning %q\n%s", want, logs.String())
	}
	r := &Report{Tiers: tiers}
	var text bytes.Buffer
	r.textPlan(&text)
	if !strings.Contains(text.String(), "Tier 1: "+want+"\n") || strings.Contains(text.String(), "Tier 3") {
		t.Errorf("the report's text: want tier 1's line alone\n%s", text.String())
	}
	j := r.JSON()
	if len(j.Tiers) != 2 || j.Tiers[0].Stretch != 2 || j.Tiers[0].Every != "2h" || j.Tiers[0].Cadence != "1h" || j.Tiers[0].Unheld != want ||
		j.Tiers[1].Unheld != "" || j.Tiers[1].Stretch != 1 {
		t.Errorf("the report's JSON: %+v", j.Tiers)
	}
}

// A pool without a calendar day whose window is shorter than a day keeps
// its capacity in every window: the tiers are told the cadence it holds
// (pace.Holds), not the one a day of it would.
func TestTiersCountAShortPoolWithoutADayByItsWindow(t *testing.T) {
	t.Parallel()
	charts := regions.Charts(regions.Default...)
	for i := range charts {
		charts[i].Tier, charts[i].Depth = 1, 200
	}
	s := Schedule{Timetable: jobs.Timetable{Charts: charts, Every: time.Hour, MaxStale: 24 * time.Hour}}
	// tier 1: 32 pages an hour, 768 a day; trending keeps 80 every three
	// hours, 640 a day: every 1h12m
	c, err := costs.Load("short.yaml", []byte(`pools:
  default:  {limit: 10000, reserve: 0, window: 24h, day: America/Los_Angeles}
  search:   {limit: 100, reserve: 0, window: 24h, day: America/Los_Angeles}
  stats:    {limit: 10000, reserve: 0, window: 24h, day: America/Los_Angeles}
  trending: {limit: 80, reserve: 0, window: 3h}
operations:
  videos.list:          {default: 1, trending: 1}
  videoCategories.list: {default: 1}
  i18nRegions.list:     {default: 1}
  search.list:          {search: 1}
  videos.batchGetStats: {stats: 1}
`))
	if err != nil {
		t.Fatal(err)
	}
	tiers := Tiers(c, s)
	if len(tiers) != 1 || tiers[0].Every.Round(time.Minute) != 72*time.Minute {
		t.Fatalf("tiers %+v: want tier 1 every 1h12m", tiers)
	}
}

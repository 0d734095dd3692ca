package web

import (
	"context"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/clock"
	"github.com/ingestworks/ingest/internal/rig/storetest"
	"github.com/ingestworks/ingest/ledger"
	"github.com/ingestworks/ingest/pace"
	"github.com/ingestworks/ingest/report"
)

// TestOverviewShowsEveryPoolAlike: both usage sections show every pool,
// in the pools' order; a pool that spent nothing is one quiet line, not an
// empty chart.
func TestOverviewShowsEveryPoolAlike(t *testing.T) {
	t.Parallel()
	db := storetest.Open(t)
	now := time.Date(2026, 11, 20, 9, 30, 0, 0, time.UTC)
	var hour [24]int64
	hour[23] = 5
	rep := &report.Report{QuotaKey: "k", Backend: "embedded", Now: now, HourStart: now.Truncate(time.Hour).Add(-23 * time.Hour),
		Pools: []report.Pool{{PoolState: ingest.PoolState{Pool: "default"}}, {PoolState: ingest.PoolState{Pool: "search"}},
			{PoolState: ingest.PoolState{Pool: "stats"}}},
		Hourly: map[string][24]int64{"default": hour}}
	s, err := New(Config{Clock: clock.System, DB: db, Usage: ledger.New(db), Listen: "127.0.0.1:0", QuotaKey: "k",
		Report: func(context.Context) (*report.Report, error) { return rep, nil }})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(s)
	defer srv.Close()
	page := string(fetch(t, srv.URL+"/operator"))
	day, month, ok := strings.Cut(page[strings.Index(page, "Usage, last 24 hours"):], "Usage, last 30 days")
	if !ok {
		t.Fatalf("no usage sections in\n%s", page)
	}
	month = month[:strings.Index(month, "</section>")]
	if strings.Count(day, "<figcaption>default") != 1 || !strings.Contains(day, `<p class="quiet">no search calls in 24 hours</p>`) ||
		!strings.Contains(day, `<p class="quiet">no stats calls in 24 hours</p>`) || strings.Index(day, "search calls") > strings.Index(day, "stats calls") {
		t.Errorf("24 hours: want default's bars, then search and stats as one quiet line each\n%s", day)
	}
	for _, pool := range []string{"default", "search", "stats"} {
		if !strings.Contains(month, `<p class="quiet">no `+pool+` calls in 30 days</p>`) {
			t.Errorf("30 days: no quiet line for %s\n%s", pool, month)
		}
	}
	if strings.Contains(month, "<svg") {
		t.Errorf("30 days: a chart drawn for pools that spent nothing")
	}
}

// TestOverviewShowsPacing: whose plan it is, the pacing lines with the
// fixed cadence's run-out, and each chart's age, planned cadence and next
// paced run; a dropped chart says so.
func TestOverviewShowsPacing(t *testing.T) {
	t.Parallel()
	db := storetest.Open(t)
	now := time.Date(2026, 11, 20, 9, 30, 0, 0, time.UTC)
	rep := &report.Report{QuotaKey: "k", Backend: "embedded", Now: now,
		Freshness: &report.Freshness{Daemon: true, At: now.Add(-time.Minute),
			Pools: []report.PoolPace{{Pool: "default", Rate: 300, Budget: 4200, Reset: now.Add(14 * time.Hour), Projected: 4180,
				Fixed: 9000, RunsOut: now.Add(5 * time.Hour)}},
			Charts: []report.ChartAge{{Chart: "US", Age: 12 * time.Minute, Every: 90 * time.Minute, Floor: time.Hour, Next: now.Add(time.Hour)},
				{Chart: "US/10", Age: -1, Every: 3 * time.Hour, Floor: time.Hour},
				{Chart: "US/24", Age: -1, Every: pace.Never, Floor: time.Hour, Dropped: true}}}}
	s, err := New(Config{Clock: clock.System, DB: db, Usage: ledger.New(db), Listen: "127.0.0.1:0", QuotaKey: "k",
		Report: func(context.Context) (*report.Report, error) { return rep, nil }})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(s)
	defer srv.Close()
	page := string(fetch(t, srv.URL+"/operator"))
	for _, want := range []string{"The plan the pacing worker follows, made", "default: 300.0 units an hour, 4200 to spend by",
		"paced, the charts spend 4180", "at --every, 9000", `runs out at`,
		`<td class="n">12m</td><td class="n">1h30m</td><td class="n">` + stampTime(now.Add(time.Hour)) + `</td><td class="n">1h</td>`,
		`<td class="n">never</td><td class="n">3h</td><td class="n">-</td>`, "dropped: the budget holds the charts above it"} {
		if !strings.Contains(page, want) {
			t.Errorf("the overview lacks %q", want)
		}
	}
}

// TestOverviewNextRunIsThePlans: under a paced cron a chart's next run is
// "from" the time it is due, in the region table as in the plan's; a
// dropped chart has none.
func TestOverviewNextRunIsThePlans(t *testing.T) {
	t.Parallel()
	db := storetest.Open(t)
	now := time.Date(2026, 11, 20, 9, 30, 0, 0, time.UTC)
	due := now.Add(26 * time.Minute)
	rep := &report.Report{QuotaKey: "k", Backend: "embedded", Now: now,
		Regions: []report.Region{{Code: "US", Status: ingest.StatusCompleted, NextRun: due, NextFrom: true}, {Code: "CA", Status: ingest.StatusCompleted}},
		Freshness: &report.Freshness{Daemon: true, At: now, DueFrom: true,
			Charts: []report.ChartAge{{Chart: "US", Age: time.Hour, Every: time.Hour, Floor: time.Hour, Next: due},
				{Chart: "CA", Age: time.Hour, Every: pace.Never, Floor: time.Hour, Dropped: true}}}}
	s, err := New(Config{Clock: clock.System, DB: db, Usage: ledger.New(db), Listen: "127.0.0.1:0", QuotaKey: "k",
		Report: func(context.Context) (*report.Report, error) { return rep, nil }})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(s)
	defer srv.Close()
	page := string(fetch(t, srv.URL+"/operator"))
	if n := strings.Count(page, "from "+stampTime(due)); n != 2 {
		t.Errorf("the overview says %q %d times, want in the region table and the plan's", "from "+stampTime(due), n)
	}
}

// The operator's page shows each of the proxy's clients' spend of the day
// and what is left to clients, once a client spent; none before.
func TestOverviewShowsTheProxysClients(t *testing.T) {
	t.Parallel()
	db := storetest.Open(t)
	now := time.Date(2026, 11, 20, 9, 30, 0, 0, time.UTC)
	rep := &report.Report{QuotaKey: "k", Backend: "embedded", Now: now, HourStart: now.Truncate(time.Hour).Add(-23 * time.Hour),
		Pools: []report.Pool{{PoolState: ingest.PoolState{Pool: "default"}}}, Hourly: map[string][24]int64{}}
	s, err := New(Config{Clock: clock.System, DB: db, Usage: ledger.New(db), Listen: "127.0.0.1:0", QuotaKey: "k",
		Report: func(context.Context) (*report.Report, error) { return rep, nil }})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(s)
	defer srv.Close()
	if page := string(fetch(t, srv.URL+"/operator")); strings.Contains(page, "The proxy's clients") {
		t.Errorf("the page shows the proxy's clients when none spent")
	}
	rep.ByClient = []report.ClientUnits{{Client: "ann", Calls: 3, Units: map[string]int64{"default": 3}}}
	rep.LeftToClients = map[string]int64{"default": 1234}
	page := string(fetch(t, srv.URL+"/operator"))
	if !strings.Contains(page, "<td>ann</td><td>3</td><td>3</td>") || !strings.Contains(page, "default 1,234") {
		t.Errorf("the page does not show ann's spend and what is left to clients:\n%s", page)
	}
}

package sim

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ingestworks/ingest"
)

// operated is history's good day with the readers on, its runs numbered
// and each a second long, and the region catalogue read at the first
// pass's instant, outside it.
func operated() *History {
	h := history(hourly(24, 1), hourly(24, 60), 1)
	h.Readers = true
	for i := range h.Runs {
		h.Runs[i].ID = int64(i + 1)
		h.Runs[i].Finished = h.Runs[i].Started.Add(time.Second)
	}
	for i, c := range h.Calls {
		if strings.HasSuffix(c.Path, "/videos") {
			h.Calls[i].Kind, h.Calls[i].Region = KindChart, "US"
		}
	}
	h.Calls = slices.Insert(h.Calls, 0, Call{At: t0, Path: "/youtube/v3/i18nRegions", Kind: KindOther})
	return h
}

// quotaRead is a read of /api/v1/quota at, its daily units from the
// upstream's charges as they were.
func quotaRead(h *History, at time.Time) OperatorRead {
	r := OperatorRead{At: at, Answered: at, Used: map[string]int64{}, Daily: map[string][]int64{},
		DailyFrom: at.UTC().Truncate(24*time.Hour).AddDate(0, 0, -29)}
	for _, pool := range []string{ingest.DefaultPool, statsPool} {
		r.Used[pool] = chargedIn(h.Calls, pool, at.Add(-24*time.Hour), at.Add(time.Nanosecond), nil)
		days := make([]int64, 30)
		for i := range days {
			from := r.DailyFrom.AddDate(0, 0, i)
			days[i] = chargedIn(h.Calls, pool, from, earlier(from.Add(24*time.Hour), at.Add(time.Nanosecond)), nil)
		}
		r.Daily[pool] = days
	}
	return r
}

func TestCheckFindsARunsUnitsOtherThanItsCalls(t *testing.T) {
	h := operated()
	read := quotaRead(h, t0.Add(30*time.Minute))
	read.Last = []LastRun{{Chart: "US", Started: t0, Units: 1}}
	h.Operator = []OperatorRead{read}
	if f := checkOperator(h); len(f) != 0 {
		t.Errorf("the first run's one page, the catalogue's call outside it: %q", f)
	}
	h.Operator[0].Last[0].Units = 2
	if f := checkOperator(h); len(f) != 1 || !strings.Contains(f[0], "US's last run 1 (from 2026-10-25T00:00:00Z) took 2 units, the upstream charged 1 for its calls") {
		t.Errorf("the catalogue's call counted to the first run: %q", f)
	}
	h.Operator[0].Last = nil
	if f := checkOperator(h); len(f) != 1 || !strings.Contains(f[0], "never named a chart's last run") {
		t.Errorf("no last run read: %q", f)
	}
	h.Operator[0].Last = []LastRun{{Chart: "US", Started: t0.Add(time.Minute), Units: 1}}
	if f := checkOperator(h); len(f) != 1 || !strings.Contains(f[0], "which the database has not") {
		t.Errorf("a last run the database has not: %q", f)
	}
}

func TestCheckFindsDailyUnitsOtherThanTheUpstreams(t *testing.T) {
	h := operated()
	at := t0.Add(25*time.Hour + 30*time.Minute)
	last := []LastRun{{Chart: "US", Started: t0.Add(23 * time.Hour), Units: 1}}
	read := quotaRead(h, at)
	read.Last = last
	h.Operator = []OperatorRead{read}
	if f := checkOperator(h); len(f) != 0 {
		t.Errorf("the upstream's days as they were: %q", f)
	}
	// the two calls of the day charged at its midnight may have been
	// admitted the day before
	h.Operator[0].Daily[ingest.DefaultPool][28] -= 2
	if f := checkOperator(h); len(f) != 0 {
		t.Errorf("the calls charged at midnight counted the day before: %q", f)
	}
	h.Operator[0].Daily[ingest.DefaultPool][28]--
	if f := checkOperator(h); len(f) != 1 || !strings.Contains(f[0], "pool default's day 2026-10-25: 22 units, the upstream charged 23 to 25") {
		t.Errorf("a day a unit short: %q", f)
	}
	read = quotaRead(h, at)
	read.Last = last
	for _, units := range read.Daily {
		clear(units)
	}
	h.Operator = []OperatorRead{read}
	if f := checkOperator(h); len(f) != 1 || !strings.Contains(f[0], "operator: 2 of ") {
		t.Errorf("the days read zero: %q", f)
	}
}

func TestCheckFindsUsedUnitsOutsideTheWindow(t *testing.T) {
	h := operated()
	read := quotaRead(h, t0.Add(12*time.Hour+30*time.Minute))
	read.Last = []LastRun{{Chart: "US", Started: t0.Add(12 * time.Hour), Units: 1}}
	h.Operator = []OperatorRead{read}
	if f := checkOperator(h); len(f) != 0 {
		t.Errorf("the window as the upstream charged it: %q", f)
	}
	h.Operator[0].Used[statsPool]++
	if f := checkOperator(h); len(f) != 0 {
		t.Errorf("a unit the upstream never charged, spent: %q", f)
	}
	h.Operator[0].Used[statsPool] -= 2
	if f := checkOperator(h); len(f) != 1 || !strings.Contains(f[0], "pool stats: 12 units used, under the 13 the upstream charged for the calls admitted in its 24h0m0s") {
		t.Errorf("a unit charged not counted: %q", f)
	}
	delete(h.Operator[0].Used, statsPool)
	if f := checkOperator(h); len(f) != 0 {
		t.Errorf("a pool the limiter did not say: %q", f)
	}
}

func TestCheckFindsAReportBeforeTheFirstStartThatFailedOrMadeTheDatabase(t *testing.T) {
	never := map[string]ingest.RunStatus{"US": ingest.StatusNever, "GB": ingest.StatusNever}
	for _, c := range []struct {
		name   string
		before Before
		want   string
	}{
		{"good", Before{Asked: true, Statuses: never}, ""},
		{"not asked", Before{}, ""},
		{"failed", Before{Asked: true, Err: "open ingest.db: stat ingest.db: no such file or directory"}, "with no database yet, failed: open ingest.db"},
		{"a database said", Before{Asked: true, Database: true, Statuses: never}, "said a database was there"},
		{"a file made", Before{Asked: true, Statuses: never, Created: true}, "left a file at the database's path"},
		{"a region run", Before{Asked: true, Statuses: map[string]ingest.RunStatus{"US": ingest.StatusCompleted}}, "US's status was completed, not never"},
		{"no region", Before{Asked: true}, "named no region"},
	} {
		h := &History{Before: c.before}
		f := checkOperator(h)
		if c.want == "" && len(f) != 0 || c.want != "" && (len(f) != 1 || !strings.Contains(f[0], c.want)) {
			t.Errorf("%s: %q, want %q", c.name, f, c.want)
		}
	}
}

func TestCheckFindsARunListedOtherwiseThanTheDatabaseHasIt(t *testing.T) {
	h := operated()
	read := quotaRead(h, t0.Add(12*time.Hour+30*time.Minute))
	read.Last = []LastRun{{Chart: "US", Started: t0.Add(12 * time.Hour), Units: 1}}
	for _, id := range []int64{13, 12, 11} {
		r := h.Runs[id-1]
		read.Runs = append(read.Runs, ListedRun{ID: id, Chart: "US", Status: r.Status, Started: r.Started, Finished: r.Finished})
	}
	read.Runs[0].Finished, read.Runs[0].Status, read.Runs[0].Pages = time.Time{}, ingest.StatusRunning, 3
	h.Operator = []OperatorRead{read}
	// a worker of another database ran a chart of its own, its ids its own
	peer := Join{Interval: Interval{t0.Add(20 * time.Hour), t0.Add(22 * time.Hour)}, Region: "QA"}
	h.Joins, h.Peers = append(h.Joins, peer), []Join{peer}
	h.Runs = append(h.Runs, Run{ID: 12, Region: "QA", Status: ingest.StatusCompleted, Started: t0.Add(21 * time.Hour), Finished: t0.Add(21 * time.Hour)})
	if f := checkOperator(h); len(f) != 0 {
		t.Errorf("the runs as the database has them, the newest still running, a peer's run of the same id beside: %q", f)
	}
	h.Operator[0].Runs[1].Pages = 2
	if f := checkOperator(h); len(f) != 1 || !strings.Contains(f[0], "run 12 listed as US completed from 2026-10-25T11:00:00Z to 2026-10-25T11:00:01Z with 2 pages, the database has it US completed") {
		t.Errorf("a finished run listed with pages it has not: %q", f)
	}
	h.Operator[0].Runs[1].Pages = 0
	h.Operator[0].Runs[1], h.Operator[0].Runs[2] = h.Operator[0].Runs[2], h.Operator[0].Runs[1]
	if f := checkOperator(h); len(f) != 1 || !strings.Contains(f[0], "run 12 listed after run 11, not newest first") {
		t.Errorf("runs out of order: %q", f)
	}
}

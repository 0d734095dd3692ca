package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/regions"
	"github.com/ingestworks/ingest/store"
)

// --regions all selects the catalogue the upstream lists: read once (one
// unit) and stored, read again only once it is a day old, and a region the
// upstream starts listing is among the charts run from then on. On either
// database.
func TestRegionsAllFollowsTheUpstreamsCatalogue(t *testing.T) {
	t.Parallel()
	for _, kind := range []string{"sqlite", "postgres"} {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t)
			if kind == "postgres" {
				h.withPostgres()
			}
			followsTheCatalogue(t, h)
		})
	}
}

func followsTheCatalogue(t *testing.T, h *harness) {
	h.fake.SetChartShape(1, 1)
	h.fake.ListRegion("AD", "Andorra") // valid, not in the built-in copy, no chart
	want := len(regions.Builtin) + 1
	listCharged := func() int64 { return h.fake.ChargedByOp(testKey)[ingest.OpRegionsList] }

	res := h.mustRunGrowing(0, "run", "--once", "--regions", "all")
	if got := listCharged(); got != 1 {
		t.Fatalf("the first run --regions all made %d charged %s calls, want 1\n%s", got, ingest.OpRegionsList, res)
	}
	if !strings.Contains(res.stderr, fmt.Sprintf("charts=%d ", want)) || !strings.Contains(res.stderr, "skipped=1") {
		t.Errorf("run --regions all does not run the %d charts the upstream lists, AD skipped (it has no chart):\n%s", want, res)
	}
	if used, _, _, _, _, _ := h.report().pool(t, "default"); used != h.fake.ChargedBuckets(testKey)["default"] {
		t.Errorf("upstream charged %d, the limiter counts %d: the catalogue's call passes the limiter", h.fake.ChargedBuckets(testKey)["default"], used)
	}

	// A second run within the day reads the stored catalogue: AD is still
	// there, and nothing more is charged for it.
	res = h.mustRunGrowing(0, "run", "--once", "--regions", "all")
	if got := listCharged(); got != 1 {
		t.Errorf("a second run within the day charged %s again (%d calls in all)", ingest.OpRegionsList, got)
	}
	if !strings.Contains(res.stderr, fmt.Sprintf("charts=%d ", want)) {
		t.Errorf("the second run does not run the stored catalogue's %d charts:\n%s", want, res)
	}
	rep := h.report("--regions", "all")
	if i := slices.IndexFunc(rep.Regions, func(r reportRegion) bool { return r.Code == "AD" }); i < 0 || rep.Regions[i].Name != "Andorra" {
		t.Errorf("report --regions all does not name AD as the stored catalogue does: %+v", rep.Regions)
	}

	// A day later the catalogue is read again, once.
	db, err := store.Open(context.Background(), h.db())
	if err != nil {
		t.Fatal(err)
	}
	_, err = db.Writer().Exec(fmt.Sprintf(`UPDATE region_catalogue SET fetched_ms = fetched_ms - %d`, (25 * time.Hour).Milliseconds()))
	db.Close()
	if err != nil {
		t.Fatal(err)
	}
	h.mustRunGrowing(0, "run", "--once", "--regions", "all")
	if got := listCharged(); got != 2 {
		t.Errorf("a run a day later made %d charged %s calls in all, want 2", got, ingest.OpRegionsList)
	}
}

// Before the first read, and when the upstream cannot be asked, the
// built-in copy serves: the run goes on and says why, and nothing is
// stored, so the next run asks again.
func TestRegionsAllOfflineUsesTheBuiltinCopy(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.fake.SetChartShape(1, 1)
	h.fake.ListRegion("AD", "Andorra")
	h.fake.FailNext(4, http.StatusServiceUnavailable) // every attempt of the catalogue's call
	res := h.mustRunGrowing(0, "run", "--once", "--regions", "all")
	if !strings.Contains(res.stderr, "the region catalogue was not read from the upstream") {
		t.Errorf("run does not say the catalogue was not read:\n%s", res)
	}
	n := len(regions.Builtin)
	if !strings.Contains(res.stderr, fmt.Sprintf("charts=%d completed=%d ", n, n)) {
		t.Errorf("run --regions all offline does not run the built-in copy's %d charts:\n%s", n, res)
	}
	if got := queryInt(t, openDB(t, h.db()), `SELECT count(*) FROM region_catalogue`); got != 0 {
		t.Errorf("the failed read stored %d regions", got)
	}
}

// report describes the regions the database holds, each by its name, not
// the default regions it never ran; the catalogue it names them by is the
// stored one, read again by no one.
func TestReportDescribesTheRegionsHeld(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.fake.SetChartShape(1, 1)
	h.mustRun(0, "run", "--once", "--regions", "NG,ZA")
	rep := h.report()
	var codes, names []string
	for _, r := range rep.Regions {
		codes, names = append(codes, r.Code), append(names, r.Name)
	}
	if !slices.Equal(codes, []string{"NG", "ZA"}) || !slices.Equal(names, []string{"Nigeria", "South Africa"}) {
		t.Errorf("report --json regions %v named %v; want NG, ZA named Nigeria, South Africa", codes, names)
	}
	var plan struct {
		Plan []struct {
			Pool    string `json:"pool"`
			Regions int    `json:"regions"`
		} `json:"plan"`
	}
	if err := json.Unmarshal([]byte(h.mustRun(0, "report", "--json").stdout), &plan); err != nil {
		t.Fatal(err)
	}
	for _, p := range plan.Plan {
		if p.Regions != 2 {
			t.Errorf("report's plan of pool %s counts %d regions, want the 2 the database holds", p.Pool, p.Regions)
		}
	}
	text := h.mustRun(0, "report").stdout
	if !strings.Contains(text, "NG Nigeria ") || strings.Contains(text, "US United States") {
		t.Errorf("report's text does not list NG by name, or lists US it never ran:\n%s", text)
	}
	if got := h.fake.ChargedByOp(testKey)[ingest.OpRegionsList]; got != 0 {
		t.Errorf("run --regions NG,ZA and report charged %d %s calls, want none", got, ingest.OpRegionsList)
	}
}

// A daemon reads the catalogue at its start when none is stored, whatever
// its regions, and its /quota names each region; what it stored serves run
// --once --regions all afterwards, which asks the upstream nothing more.
func TestDaemonReadsTheCatalogue(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.fake.SetChartShape(1, 1)
	h.fake.ListRegion("AD", "Andorra")
	addr := closedAddr(t)
	p := h.start("run", "--every", "1h", "--regions", "US", "--listen", addr)
	stored := func() bool {
		return h.fake.ChargedByOp(testKey)[ingest.OpRegionsList] == 1 &&
			queryInt(t, openDB(t, h.db()), `SELECT count(*) FROM region_catalogue WHERE code = 'AD'`) == 1
	}
	if !waitFor(60*time.Second, stored) {
		t.Fatalf("the daemon did not read and store the catalogue within 60s\n%s", p.out)
	}
	var body string
	if !waitFor(30*time.Second, func() bool {
		if !siteServed("http://" + addr) {
			return false
		}
		body = httpGet("http://" + addr + "/quota")
		return body != ""
	}) ||
		!regexp.MustCompile(`"code":\s*"US",\s*"name":\s*"United States"`).MatchString(body) {
		t.Errorf("/quota does not name US beside its code:\n%s", body)
	}
	p.signal(t, syscall.SIGTERM)
	if _, ok := p.wait(30 * time.Second); !ok {
		t.Fatalf("daemon still running 30s after SIGTERM\n%s", p.out)
	}
	res := h.mustRunGrowing(0, "run", "--once", "--regions", "all")
	if got := h.fake.ChargedByOp(testKey)[ingest.OpRegionsList]; got != 1 {
		t.Errorf("run --once --regions all after the daemon charged %s again (%d calls in all)", ingest.OpRegionsList, got)
	}
	if !strings.Contains(res.stderr, fmt.Sprintf("charts=%d ", len(regions.Builtin)+1)) {
		t.Errorf("run --regions all does not run the catalogue the daemon stored:\n%s", res)
	}
}

// --regions all tells one plan at start, of the charts the catalogue read
// then selects, and it is the plan every view reads: when the upstream
// lists a region the stored copy lacks, and when it lists none.
func TestRegionsAllTellsOnePlan(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.fake.SetChartShape(1, 1)
	h.fake.ListRegion("AD", "Andorra") // not in the built-in copy: the catalogue read selects one chart more
	for _, when := range []string{"a catalogue that grew", "the stored catalogue"} {
		res := h.mustRunGrowing(0, "run", "--once", "--regions", "all", "--every", "1h")
		if n := len(planLine.FindAllString(res.stderr, -1)); n != 1 {
			t.Fatalf("with %s run --regions all told %d plans of the default pool, want 1\n%s", when, n, res)
		}
		if !strings.Contains(planLine.FindString(res.stderr), fmt.Sprintf(" regions=%d ", len(regions.Builtin)+1)) {
			t.Errorf("with %s the plan told is not of the %d regions the upstream lists\n%s", when, len(regions.Builtin)+1, res)
		}
		told := matchUnits(planLine, res.stderr)
		if js := planUnits(t, "report --json", h.mustRun(0, "report", "--json").stdout); js != told {
			t.Errorf("with %s the plan told is %d units a day, the recorded one %d", when, told, js)
		}
	}
}

package main

import (
	"encoding/json"
	"regexp"
	"strconv"
	"syscall"
	"testing"
	"time"
)

// tiered is a schedule of every region's top 50 every three hours beside
// the default regions whole and hourly.
const tiered = "all:tier=3:depth=50,default:tier=1:depth=200"

// planUnits is the default pool's units a day of a report --json or
// /api/v1/quota body.
func planUnits(t *testing.T, what, body string) int64 {
	t.Helper()
	var rep struct {
		Plan []struct {
			Pool  string `json:"pool"`
			Units int64  `json:"units_per_day"`
		} `json:"plan"`
	}
	if err := json.Unmarshal([]byte(body), &rep); err != nil {
		t.Fatalf("%s: %v\n%s", what, err, body)
	}
	for _, p := range rep.Plan {
		if p.Pool == "default" {
			return p.Units
		}
	}
	t.Fatalf("%s has no plan of the default pool\n%s", what, body)
	return 0
}

// matchUnits is the first number re's group finds in text, -1 for none.
func matchUnits(re *regexp.Regexp, text string) int64 {
	m := re.FindStringSubmatch(text)
	if m == nil {
		return -1
	}
	n, _ := strconv.ParseInt(m[1], 10, 64)
	return n
}

var (
	planLine   = regexp.MustCompile(`msg=plan pool=default .*units_per_day=(\d+)`)
	reportLine = regexp.MustCompile(`= (\d+) units a day in default `)
)

// The schedule a run follows, tiers and depths with it, is the one every
// view plans: after run --once with tiers (its charts measured), the units
// a day of its plan line,
// report, report --json and /api/v1/quota (of serve, reading the run's
// record) are one figure, and a tiered daemon's /api/v1/quota says it too.
func TestOneScheduleEverywhere(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.fake.SetChartShape(200, 50)
	// The first run measures each chart's pages (the fake's charts are
	// shorter than their depth in places); the second plans with them, as
	// every view after it does.
	h.mustRun(0, "run", "--once", "--every", "1h", "--regions", tiered)
	res := h.mustRun(0, "run", "--once", "--every", "1h", "--regions", tiered)
	ran := matchUnits(planLine, res.stderr)
	if ran <= 0 {
		t.Fatalf("run --once --every printed no plan line of the default pool\n%s", res)
	}
	text := matchUnits(reportLine, h.mustRun(0, "report").stdout)
	js := planUnits(t, "report --json", h.mustRun(0, "report", "--json").stdout)

	addr := closedAddr(t)
	p := h.start("serve", "--listen", addr)
	base := "http://" + addr
	if !waitFor(30*time.Second, func() bool { return apiGetOK(base + "/healthz") }) {
		t.Fatalf("ingest serve never answered on %s\n%s", addr, p.out)
	}
	api := planUnits(t, "/api/v1/quota", httpGet(base+"/api/v1/quota"))
	p.signal(t, syscall.SIGTERM)
	p.wait(20 * time.Second)
	if text != ran || js != ran || api != ran {
		t.Errorf("units a day of the default pool: run's plan line %d, report %d, report --json %d, /api/v1/quota %d; want one figure",
			ran, text, js, api)
	}

	// A tiered daemon records its schedule at start; its own listener and
	// report read it.
	addr = closedAddr(t)
	d := h.start("run", "--every", "1h", "--regions", tiered, "--listen", addr)
	base = "http://" + addr
	// Its start reads every catalogued region's plan: the bound of growing work.
	if !waitFor(longTimeout, func() bool { return siteServed(base) || d.exited() }) || d.exited() {
		t.Fatalf("the daemon never answered on %s\n%s", addr, d.out)
	}
	var daemon int64 = -1
	waitFor(longTimeout, func() bool { daemon = matchUnits(planLine, d.out.String()); return daemon > 0 || d.exited() })
	api = planUnits(t, "the daemon's /api/v1/quota", httpGet(base+"/api/v1/quota"))
	js = planUnits(t, "report --json beside the daemon", h.mustRun(0, "report", "--json").stdout)
	d.signal(t, syscall.SIGTERM)
	if c, ok := d.wait(20 * time.Second); !ok || c != 0 {
		t.Errorf("daemon: exit %d, exited %v\n%s", c, ok, d.out)
	}
	if api != daemon || js != daemon {
		t.Errorf("units a day under the daemon: its plan line %d, its /api/v1/quota %d, report --json %d; want one figure",
			daemon, api, js)
	}
	t.Logf("default pool: %d units a day once, %d under the daemon", ran, daemon)
}

// A pool that cannot hold the schedule at all (smaller than a day of the
// regions' category names) is exit 2 before anything is spent, for run
// --once and the daemon alike, naming the pool and what would fit; never a
// daemon that plans nothing.
func TestPoolThatHoldsNothingIsRefused(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.tightCosts(5)
	for _, args := range [][]string{{"run", "--once", "--every", "1h"}, {"run", "--every", "1h"}} {
		res := h.run(append(args, "--regions", "default")...)
		if res.code != 2 || !regexp.MustCompile(`default: 5 units a day cannot hold the 8 regions' category names .*the names of at most 5 regions fit`).MatchString(res.stderr) {
			t.Errorf("%v on a pool of 5 units a day: want exit 2 naming the pool and what fits, got %s", args, res)
		}
	}
	if got := h.fake.Requests(); got != 0 {
		t.Errorf("the refused runs made %d upstream requests, want none", got)
	}
}

// scheduledLine is the daemon's start saying when a chart runs first.
var scheduledLine = regexp.MustCompile(`msg=scheduled region=(\S+) kind=chart first_slot=(\S+)`)

// TestTheLogAndReportSayOneNextRun: a daemon started just after every
// chart was fetched says each one's first run as report gives its next
// run: the plan's, a cadence after the pass, never the next slot of the
// stagger that the pacer declines.
func TestTheLogAndReportSayOneNextRun(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.mustRun(0, "run", "--once", "--regions", "US,GB,IN")
	addr := closedAddr(t)
	d := h.start("run", "--every", "1h", "--regions", "US,GB,IN", "--listen", addr)
	said := map[string]string{}
	if !waitFor(longTimeout, func() bool {
		for _, m := range scheduledLine.FindAllStringSubmatch(d.out.String(), -1) {
			said[m[1]] = m[2]
		}
		return len(said) == 3 && siteServed("http://"+addr) || d.exited()
	}) || d.exited() {
		t.Fatalf("the daemon did not say its schedule and serve:\n%s", d.out)
	}
	rep := h.report()
	d.signal(t, syscall.SIGTERM)
	d.wait(20 * time.Second)
	for _, r := range rep.Regions {
		if r.NextRun == nil || said[r.Code] != *r.NextRun {
			t.Errorf("%s: the daemon's log says its first run is %s, report --json its next %v", r.Code, said[r.Code], deref(r.NextRun))
		}
	}
}

package main

import (
	"encoding/json"
	"math"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ingestworks/ingest/report"
)

// A paced daemon serves each chart's age and its planned cadence, and
// tracking's: a schedule that fits the day keeps --every and --track-every.
func TestPaceMetrics(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	addr := closedAddr(t)
	p := h.start("run", "--every", "1h", "--regions", "US", "--listen", addr)
	base := "http://" + addr
	var body string
	if !waitFor(60*time.Second, func() bool {
		body = httpGet(base + "/metrics")
		return strings.Contains(body, `ingest_chart_age_seconds{chart="US"}`)
	}) {
		t.Fatalf("no chart age within 60s\n%s", p.out)
	}
	for _, want := range []string{`ingest_pace_cadence_seconds{chart="US"} 3600`, `ingest_pace_cadence_seconds{chart="track"} 3600`,
		`ingest_pace_projected_units{pool="default"}`, `ingest_pace_share{pool="default"} 1`,
		`ingest_pace_fixed_runs_out_timestamp_seconds{pool="default"} 0`} {
		if !strings.Contains(body, want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
	promtoolCheck(t, body)
	p.signal(t, syscall.SIGTERM)
	if c, ok := p.wait(20 * time.Second); !ok || c != 0 {
		t.Errorf("daemon: exit %d, exited %v\n%s", c, ok, p.out)
	}
}

// paceJSON is the pace section of report --json and /api/v1/quota.
type paceJSON struct {
	Pace struct {
		Source string `json:"source"`
		Charts []struct {
			Chart   string   `json:"chart"`
			Every   *float64 `json:"every_seconds"`
			NextRun *string  `json:"next_run"`
			Dropped bool     `json:"dropped"`
		} `json:"charts"`
	} `json:"pace"`
}

func (p paceJSON) every(chart string) float64 {
	for _, c := range p.Pace.Charts {
		if c.Chart == chart && c.Every != nil {
			return *c.Every
		}
	}
	return -1
}

// metricValue is the value of the metric line that starts with name.
func metricValue(body, name string) float64 {
	for _, line := range strings.Split(body, "\n") {
		if rest, ok := strings.CutPrefix(line, name+" "); ok {
			v, err := strconv.ParseFloat(strings.TrimSpace(rest), 64)
			if err == nil {
				return v
			}
		}
	}
	return -1
}

// One plan: on a pool that cannot give both regions' charts a pass an
// hour, GB's paced cadence is one figure in /metrics, report --json,
// /api/v1/quota and the dashboard, all read from the plan the daemon
// published. A restart a minute later costs nothing: no chart is fetched
// again before its cadence, and the new daemon's plan is the same.
func TestPaceOnePlanAndFreeRestart(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.tightCosts(150)
	addr := closedAddr(t)
	args := []string{"run", "--every", "1h", "--regions", "US,GB", "--listen", addr}
	p := h.start(args...)
	base := "http://" + addr
	if !waitFor(60*time.Second, func() bool { return strings.Contains(p.out.String(), "start: caught up") }) {
		t.Fatalf("the daemon did not finish its start within 60s\n%s", p.out)
	}
	metrics := httpGet(base + "/metrics")
	fromMetrics := math.Round(metricValue(metrics, `ingest_pace_cadence_seconds{chart="GB"}`))
	var rep, api paceJSON
	out := h.mustRun(0, "report", "--json")
	if err := json.Unmarshal([]byte(out.stdout), &rep); err != nil {
		t.Fatalf("report --json: %v\n%s", err, out)
	}
	if err := json.Unmarshal([]byte(httpGet(base+"/api/v1/quota")), &api); err != nil {
		t.Fatalf("/api/v1/quota: %v", err)
	}
	page := httpGet(base + "/operator")
	every := rep.every("GB")
	if every <= 3600 {
		t.Fatalf("GB's cadence is %vs: the pool was meant to be too small for both charts hourly\n%s", every, out.stdout)
	}
	if rep.Pace.Source != "published" || api.Pace.Source != "published" {
		t.Errorf("the plan's source: report %q, API %q; want the daemon's, published", rep.Pace.Source, api.Pace.Source)
	}
	if fromMetrics != every || api.every("GB") != every {
		t.Errorf("GB's cadence: /metrics %v s, report %v s, /api/v1/quota %v s; want one figure", fromMetrics, every, api.every("GB"))
	}
	if text := report.ShortDuration(time.Duration(every) * time.Second); !strings.Contains(page, `<td class="n">`+text+`</td>`) {
		t.Errorf("the operator's page does not show GB's cadence %s", text)
	}
	t.Logf("GB every %vs in /metrics, report, /api/v1/quota and the dashboard", every)

	p.signal(t, syscall.SIGTERM)
	if c, ok := p.wait(20 * time.Second); !ok || c != 0 {
		t.Fatalf("daemon: exit %d, exited %v\n%s", c, ok, p.out)
	}
	before := h.fake.Requests()
	again := h.start(args...)
	if !waitFor(60*time.Second, func() bool { return strings.Contains(again.out.String(), "start: caught up") }) {
		t.Fatalf("the restarted daemon did not finish its start within 60s\n%s", again.out)
	}
	if got := h.fake.Requests(); got != before {
		t.Errorf("the restart called the upstream %d times; its charts were a minute old\n%s", got-before, again.out)
	}
	if strings.Contains(again.out.String(), `msg="catching up a missed slot" region=`) {
		t.Errorf("the restart caught up a chart a minute old:\n%s", again.out)
	}
	var after paceJSON
	out = h.mustRun(0, "report", "--json")
	if err := json.Unmarshal([]byte(out.stdout), &after); err != nil {
		t.Fatalf("report --json: %v\n%s", err, out)
	}
	// The same plan, to the seconds the minute between them moves: the
	// window frees what the first daemon spent a little later.
	if got := after.every("GB"); math.Abs(got-every) > every/100 {
		t.Errorf("after the restart GB's cadence is %vs, was %vs: the restart changed the plan", got, every)
	}
	again.signal(t, syscall.SIGTERM)
	if c, ok := again.wait(20 * time.Second); !ok || c != 0 {
		t.Errorf("restarted daemon: exit %d, exited %v\n%s", c, ok, again.out)
	}
}

// run --once --pace from cron runs only the charts the plan says are due:
// a second run a moment after the first fetches nothing, and publishes the
// plan report shows; a plain run --once still runs every chart.
func TestPacedOnceRunsWhatIsDue(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	paced := []string{"run", "--once", "--pace", "--every", "1h", "--regions", "US,GB"}
	first := h.mustRun(0, paced...)
	if !strings.Contains(first.stderr, "due=2") {
		t.Errorf("the first paced run did not run both charts:\n%s", first)
	}
	before := h.fake.Requests()
	second := h.mustRun(0, paced...)
	if got := h.fake.Requests(); got != before || !strings.Contains(second.stderr, "due=0") {
		t.Errorf("a paced run a moment after the first called the upstream %d times (want none):\n%s", got-before, second)
	}
	var rep paceJSON
	out := h.mustRun(0, "report", "--json")
	if err := json.Unmarshal([]byte(out.stdout), &rep); err != nil {
		t.Fatalf("report --json: %v\n%s", err, out)
	}
	if rep.Pace.Source != "published" || rep.every("US") != 3600 {
		t.Errorf("report's plan: source %q, US every %vs; want the paced run's, hourly\n%s", rep.Pace.Source, rep.every("US"), out.stdout)
	}
	h.mustRun(0, "run", "--once", "--regions", "US,GB")
	if got := h.fake.Requests(); got <= before {
		t.Errorf("a plain run --once called nothing: it must run every chart")
	}
}

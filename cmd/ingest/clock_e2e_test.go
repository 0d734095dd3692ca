package main

import (
	"encoding/json"
	"net"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/ingestworks/ingest"
)

// TestClockSkewLines: a run keeps the upstream's time from its answers'
// Date header; report (text and --json) and check say how far this host's
// clock is from it; with the upstream's clock an hour ahead, check fails
// naming the clock.
func TestClockSkewLines(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.fake.SetClock(func() time.Time { return time.Now().Add(-3 * time.Second) })
	h.mustRun(0, "run", "--once", "--regions", "US")
	var rep struct {
		Clock *struct {
			Skew float64 `json:"skew_seconds"`
			Seen string  `json:"seen_at"`
		} `json:"upstream_clock"`
	}
	out := h.mustRun(0, "report", "--json")
	if err := json.Unmarshal([]byte(out.stdout), &rep); err != nil || rep.Clock == nil || rep.Clock.Skew > -2 || rep.Clock.Skew < -5 {
		t.Fatalf("report --json upstream_clock: %+v (%v); want a skew of about -3 s\n%s", rep.Clock, err, out.stdout)
	}
	text := h.mustRun(0, "report").stdout
	line := regexp.MustCompile(`(?m)^Upstream clock: this host's clock is \d+s ahead of the upstream's.*$`).FindString(text)
	check := h.mustRun(0, "check")
	clockLine := regexp.MustCompile(`(?m)^ok +clock +.*$`).FindString(check.stdout)
	t.Logf("upstream 3 s behind: report %q; check %q; report --json skew_seconds %v", line, clockLine, rep.Clock.Skew)
	if line == "" || clockLine == "" {
		t.Fatalf("report or check does not give the clock line:\n%s\n%s", text, check.stdout)
	}
	h.fake.SetClock(func() time.Time { return time.Now().Add(time.Hour) })
	check = h.mustRun(1, "check")
	failed := regexp.MustCompile(`(?m)^FAIL +clock +.*$`).FindString(check.stdout)
	t.Logf("upstream 1 h ahead: check %q", failed)
	if failed == "" {
		t.Fatalf("check with the upstream's clock an hour ahead does not fail the clock:\n%s", check)
	}
}

// A wrong Date met once blocks nothing for good: behind a proxy whose Date
// is 15 minutes old, run --once exits 1 naming this host's clock as the
// upstream's answer (asked at no cost, its age said) tells it, and spends
// nothing; pointed back at the right upstream, the next run asks again
// before refusing on the recorded reading, replaces it and completes.
// `quota clock --forget` lifts a reading without asking.
func TestWrongDateClearsWithItsCause(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.fake.SetClock(func() time.Time { return time.Now().Add(-15 * time.Minute) })
	res := h.mustRun(1, "run", "--once", "--regions", "US")
	last := lastLine(res.stderr)
	for _, want := range []string{"this host's clock is wrong", "ago (asked at no quota cost by ", "discovery/v1/apis/youtube/v3/rest", "ingest quota clock"} {
		if !strings.Contains(last, want) {
			t.Errorf("last line behind a proxy's old Date lacks %q:\n%s", want, last)
		}
	}
	if strings.Contains(last, "did not answer") {
		t.Errorf("last line blames the limiter for the clock:\n%s", last)
	}
	if got := h.fake.Charged(testKey); got != 0 {
		t.Errorf("the upstream charged %d units behind the proxy, want 0", got)
	}
	if h.fake.Discovered() == 0 {
		t.Errorf("the upstream's time was not asked by the discovery document")
	}

	h.fake.SetClock(nil)
	check := h.run("check")
	if !strings.Contains(check.stdout+check.stderr, "recorded reading") {
		t.Errorf("check does not say the recorded reading disagrees:\n%s", check)
	}
	h.mustRun(0, "run", "--once", "--regions", "US")
	if charged, pages := h.fake.Charged(testKey), ledgerUnits(t, h.db(), "default"); charged == 0 || charged != pages {
		t.Errorf("after the clock cleared: upstream charged %d, ledger %d; want the same, not 0", charged, pages)
	}
	if got := trendingEntries(h.db()); got != int64(h.fake.ChartLength("US")) {
		t.Errorf("after the clock cleared: %d entries stored, want the chart's %d", got, h.fake.ChartLength("US"))
	}

	// With a reading of this boot at hand, the first page is decided on
	// it: admitted, fetched and charged (one unit), its answer's Date
	// taken in, and the next decision refused (docs/operations/faults.md).
	before := h.fake.Charged(testKey)
	h.fake.SetClock(func() time.Time { return time.Now().Add(-15 * time.Minute) })
	h.mustRun(1, "run", "--once", "--regions", "US")
	if spent := h.fake.Charged(testKey) - before; spent != 1 {
		t.Errorf("a wrong Date met with a reading of this boot at hand: %d units spent, want the first page's 1", spent)
	}
	shown := h.mustRun(0, "quota", "clock")
	if !strings.Contains(shown.stdout, "recorded: the upstream's Date") || !strings.Contains(shown.stdout, "skew -15m") {
		t.Errorf("quota clock does not show the recorded reading 15m behind:\n%s", shown)
	}
	h.mustRun(0, "quota", "clock", "--forget")
	if shown := h.mustRun(0, "quota", "clock"); !strings.Contains(shown.stdout, "recorded: none") {
		t.Errorf("quota clock after --forget:\n%s", shown)
	}
}

// While every decision is refused because the upstream's clock disagrees
// with the limiter's, /readyz answers 503 with the reason under its clock
// check; once the upstream's clock is right again and a decision is
// taken, it answers 200.
func TestReadyzSaysDecisionsAreRefusedOnTheClock(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.fake.SetClock(func() time.Time { return time.Now().Add(-15 * time.Minute) })
	listen, _ := anyAddr(t)
	_, port, _ := net.SplitHostPort(listen)
	base := "http://127.0.0.1:" + port
	p := h.startFor(longTimeout+time.Minute, "run", "--every", "1m", "--regions", "US", "--listen", "127.0.0.1:"+port)
	if !waitFor(cmdTimeout, func() bool { return siteServed(base) || p.exited() }) || p.exited() {
		t.Fatalf("the daemon's listener never answered\n%s", p.out)
	}
	clockCheck := func() (int, string) {
		code, body := get(t, base+"/readyz")
		var st struct {
			Checks []struct {
				Name   string `json:"name"`
				OK     bool   `json:"ok"`
				Detail string `json:"detail"`
			} `json:"checks"`
		}
		_ = json.Unmarshal([]byte(body), &st)
		for _, c := range st.Checks {
			if c.Name == "clock" {
				return code, c.Detail
			}
		}
		return code, "no clock check in " + body
	}
	var detail string
	if !waitFor(cmdTimeout, func() bool {
		code, d := clockCheck()
		detail = d
		return code == 503 && strings.Contains(d, "clock disagrees with the upstream's") || p.exited()
	}) || p.exited() {
		t.Fatalf("/readyz never said the clock refuses decisions: last %q\n%s", detail, p.out)
	}
	t.Logf("refused on the clock, /readyz's clock check: %s", detail)
	h.fake.SetClock(nil)
	if !waitFor(longTimeout, func() bool {
		code, d := clockCheck()
		detail = d
		return code == 200 || p.exited()
	}) || p.exited() {
		t.Fatalf("/readyz never answered 200 once the upstream's clock was right: last %q\n%s", detail, p.out)
	}
}

// The upstream's clock is read within a budget of its own, before a
// call's delivery bound starts: behind an upstream that answers in 12 s,
// a first run on a fresh database asks for its time (and gives up at the
// clock's budget) without taking from the first call's 20 s, so no call
// times out, none is tried again, and the upstream charges each page
// stored once.
func TestTheClockReadSpendsNoCallsBudget(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.fake.SetLatency(12 * time.Second)
	res := h.runWithin(longTimeout, "run", "--once", "--regions", "US")
	if res.code != 0 {
		t.Fatalf("want exit 0 behind a 12 s upstream, got %s", res)
	}
	if h.fake.Discovered() == 0 {
		t.Errorf("the upstream's time was never asked")
	}
	if strings.Contains(res.stderr, "retrying") {
		t.Errorf("a call was tried again behind a 12 s upstream:\n%s", res.stderr)
	}
	pages, charged := storedPages(t, h.db()), h.fake.ChargedByOp(testKey)[ingest.OpVideosList]
	t.Logf("12 s upstream: %d pages stored, %d units charged for them, %d discovery requests (under load)", pages, charged, h.fake.Discovered())
	if pages == 0 || charged != pages {
		t.Errorf("the upstream charged %d units of %s for %d pages stored; want one a page", charged, ingest.OpVideosList, pages)
	}
	if names := h.fake.ChargedByOp(testKey)[ingest.OpCategoriesList]; names > 1 {
		t.Errorf("the upstream charged %d units of %s, want the one call's", names, ingest.OpCategoriesList)
	}
}

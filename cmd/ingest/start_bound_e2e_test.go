package main

import (
	"fmt"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/regions"
)

// The daemon's start waits on the upstream for the region catalogue at most
// --start-timeout: past it, it plans on the catalogue it stored, else the
// built-in copy, says which at warn and serves, while the read goes on
// behind; the read's answer plans again only when it selects other charts.

// startWatch is what a test saw of a daemon's listener while it started:
// how long /readyz took to answer 200, every /metrics that was not 200, and
// whether the catalogue had been read from the upstream when /readyz first
// answered 200.
type startWatch struct {
	ready       time.Duration
	metricsDown []int
	readFirst   bool
}

// watchStart polls base's /metrics and /readyz until /readyz answers 200
// (false when the daemon exits first or within longTimeout it never does).
func watchStart(t *testing.T, p *proc, base string, began time.Time) (startWatch, bool) {
	t.Helper()
	var w startWatch
	ok := waitFor(longTimeout, func() bool {
		if p.exited() || !healthy(base+"/healthz") {
			return p.exited()
		}
		if code, _ := get(t, base+"/metrics"); code != 200 {
			w.metricsDown = append(w.metricsDown, code)
		}
		if code, _ := get(t, base+"/readyz"); code != 200 {
			return false
		}
		w.ready = time.Since(began)
		w.readFirst = strings.Contains(p.out.String(), "region catalogue read from the upstream")
		return true
	})
	return w, ok && !p.exited()
}

// fallbackLine is the warning of a start that planned on the catalogue
// named by its group.
var fallbackLine = regexp.MustCompile(`level=WARN msg="the region catalogue was not read from the upstream within --start-timeout[^"]*" catalogue=(\S+)`)

// catalogueCalls is what the ledger and the upstream each counted of the
// catalogue's call.
func (h *harness) catalogueCalls(t *testing.T) (ledger, upstream int64) {
	t.Helper()
	ledger = queryInt(t, openDB(t, h.db()), `SELECT count(*) FROM ledger WHERE op = ?`, ingest.OpRegionsList)
	return ledger, int64(len(h.reqs.requests("/i18nRegions")))
}

// An upstream that answers every request in 8 s: the start does not wait
// for the clock's request and the catalogue's call (16 s), it plans on the
// built-in copy within the default bound, /metrics answers 200 throughout;
// the read ends behind with the same catalogue, which plans nothing again,
// and its one call is charged once.
func TestStartIsBoundedBehindASlowUpstream(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.fake.SetChartShape(1, 1)
	h.fake.SetLatency(8 * time.Second)
	addr := closedAddr(t)
	began := time.Now()
	p := h.start("run", "--every", "1h", "--regions", "all", "--listen", addr)
	w, ok := watchStart(t, p, "http://"+addr, began)
	if !ok {
		t.Fatalf("/readyz never answered 200 behind an upstream of 8 s\n%s", p.out)
	}
	t.Logf("behind an upstream of 8 s: /readyz 200 after %s", w.ready.Round(100*time.Millisecond))
	if len(w.metricsDown) > 0 {
		t.Errorf("/metrics answered %v while the daemon started, want 200 throughout", w.metricsDown)
	}
	if w.readFirst {
		t.Errorf("/readyz answered 200 only once the catalogue was read: the start waited on the upstream\n%s", p.out)
	}
	if m := fallbackLine.FindStringSubmatch(p.out.String()); m == nil || m[1] != "built-in" {
		t.Errorf("no warning that the start planned on the built-in copy (got %q)\n%s", m, p.out)
	}
	if !waitFor(longTimeout, func() bool { return strings.Contains(p.out.String(), "region catalogue read from the upstream") }) {
		t.Fatalf("the catalogue's read never ended behind the start\n%s", p.out)
	}
	p.signal(t, syscall.SIGTERM)
	if code, exited := p.wait(cmdTimeout); !exited || code != 0 {
		t.Fatalf("after SIGTERM: exit %d (exited %v), want 0\n%s", code, exited, p.out)
	}
	out := p.out.String()
	if strings.Contains(out, "plans and starts its passes again") || strings.Count(out, `msg="daemon started"`) != 1 {
		t.Errorf("a catalogue read late that selects the charts planned planned again\n%s", out)
	}
	if n := len(planLine.FindAllString(out, -1)); n != 1 {
		t.Errorf("%d plans told, want 1\n%s", n, out)
	}
	if ledger, upstream := h.catalogueCalls(t); ledger != 1 || upstream != 1 {
		t.Errorf("the catalogue's call: %d in the ledger, %d at the upstream; want 1 and 1", ledger, upstream)
	}
}

// An upstream that answers nothing: the start plans on the built-in copy
// within the default bound and serves, /metrics 200 throughout; once the
// upstream answers, the read left behind stores a catalogue that lists a
// region more, and the daemon plans again on it, told once, its site
// served again; the catalogue's call is charged once.
func TestStartIsBoundedBehindASilentUpstream(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.fake.SetChartShape(1, 1)
	h.fake.ListRegion("AD", "Andorra") // not in the built-in copy: the read selects one chart more
	_, release := h.reqs.hold("")      // every request: the upstream's clock too
	defer release()
	addr := closedAddr(t)
	base := "http://" + addr
	began := time.Now()
	p := h.start("run", "--every", "1h", "--regions", "all", "--listen", addr)
	w, ok := watchStart(t, p, base, began)
	if !ok {
		t.Fatalf("/readyz never answered 200 behind a silent upstream\n%s", p.out)
	}
	t.Logf("behind a silent upstream: /readyz 200 after %s", w.ready.Round(100*time.Millisecond))
	if len(w.metricsDown) > 0 {
		t.Errorf("/metrics answered %v while the daemon started, want 200 throughout", w.metricsDown)
	}
	if w.readFirst {
		t.Errorf("the catalogue was read from a silent upstream\n%s", p.out)
	}
	if m := fallbackLine.FindStringSubmatch(p.out.String()); m == nil || m[1] != "built-in" {
		t.Errorf("no warning that the start planned on the built-in copy (got %q)\n%s", m, p.out)
	}
	release()
	if !waitFor(longTimeout, func() bool {
		return strings.Contains(p.out.String(), "plans and starts its passes again") && siteServed(base) || p.exited()
	}) || p.exited() {
		t.Fatalf("the daemon did not plan again on the catalogue read once the upstream answered\n%s", p.out)
	}
	if code, body := get(t, base+"/metrics"); code != 200 || !strings.Contains(body, `ingest_chart_cadence_seconds{chart="AD"}`) {
		t.Errorf("/metrics of the plan made again: %d, want 200 with the chart the catalogue added\n%.2000s", code, body)
	}
	p.signal(t, syscall.SIGTERM)
	if code, exited := p.wait(cmdTimeout); !exited || code != 0 {
		t.Fatalf("after SIGTERM: exit %d (exited %v), want 0\n%s", code, exited, p.out)
	}
	out := p.out.String()
	plans := planLine.FindAllString(out, -1)
	if len(plans) != 2 || !strings.Contains(plans[1], fmt.Sprintf(" regions=%d ", len(regions.Builtin)+1)) {
		t.Errorf("plans told %q, want 2: the built-in copy's, then the catalogue's of %d regions\n%s", plans, len(regions.Builtin)+1, out)
	}
	if ledger, upstream := h.catalogueCalls(t); ledger != 1 || upstream != 1 {
		t.Errorf("the catalogue's call: %d in the ledger, %d at the upstream; want 1 and 1", ledger, upstream)
	}
}

package main

import (
	"strings"
	"syscall"
	"testing"
	"time"
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
		`ingest_pace_projected_units{pool="default"}`,
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

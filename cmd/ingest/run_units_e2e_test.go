package main

import (
	"testing"

	"github.com/ingestworks/ingest/jobs"
)

// run --once's summary counts every unit the run spent: its passes', the
// region catalogue's (read first under --regions all), tracking's. What it
// says equals what the upstream charged (cmd/fakeyt's /_charged).
func TestRunOnceSummaryCountsEveryCall(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.fake.SetChartShape(1, 1)
	res := h.mustRunGrowing(0, "run", "--once", "--regions", "all", "--track-for", "7d", "--log-format", "json")
	var summary map[string]any
	for _, l := range jsonLines(t, res.stderr) {
		if l["msg"] == "run --once" {
			summary = l
		}
	}
	if summary == nil {
		t.Fatalf("no run --once line:\n%s", res)
	}
	charged := jobs.Sum(h.fake.ChargedPools())
	if got, _ := summary["units"].(float64); int64(got) != charged {
		t.Errorf("run --once says units=%v, the upstream charged %d (%v)", summary["units"], charged, h.fake.ChargedPools())
	}
}

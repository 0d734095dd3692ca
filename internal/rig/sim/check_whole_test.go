package sim

import (
	"strings"
	"testing"
)

func TestCheckFindsAChartServedShort(t *testing.T) {
	if f := checkChartsWhole(previousHistory()); len(f) != 0 {
		t.Fatalf("the chart served whole: %q", f)
	}
	short := previousHistory()
	short.Served[0].Entries = short.Served[0].Entries[:1]
	f := checkChartsWhole(short)
	if len(f) != 1 || !strings.Contains(f[0], "served 1 entries and left out 2 the database keeps, a02 at rank 2 first") {
		t.Errorf("a chart served without two of its run's videos: %q", f)
	}
	empty := previousHistory()
	empty.Served[0].Entries = nil
	if f := checkChartsWhole(empty); len(f) != 1 {
		t.Errorf("a chart served empty at a run that keeps three videos: %q", f)
	}
	running := previousHistory()
	running.Served[0].Entries, running.Served[0].Complete = nil, false
	if f := checkChartsWhole(running); len(f) != 0 {
		t.Errorf("a chart served while its run was still storing pages is not whole yet: %q", f)
	}
	pruned := previousHistory()
	pruned.Served[0].Entries = nil
	delete(pruned.Ranked, 3)
	if f := checkChartsWhole(pruned); len(f) != 0 {
		t.Errorf("a run the database no longer keeps asks for nothing: %q", f)
	}
}

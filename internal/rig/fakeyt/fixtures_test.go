package fakeyt

import (
	"testing"

	"github.com/ingestworks/ingest/regions"
)

// A default region the fixtures' tables do not name still gets a chart and
// a language, so that adding one to regions.Default is the whole change.
func TestADefaultRegionWithoutFixturesGetsOne(t *testing.T) {
	t.Parallel()
	lengths := chartLengths(map[string]int{})
	for _, r := range regions.Default {
		if got := lengths[r]; got != defaultChartLength {
			t.Errorf("chartLengths(none)[%s] = %d, want %d", r, got, defaultChartLength)
		}
	}
	if got := pickLang("ZZ", 3); got != "en" {
		t.Errorf("pickLang(ZZ) = %q, want en", got)
	}
}

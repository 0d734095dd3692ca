package web

import (
	"strings"
	"testing"
	"time"

	"github.com/ingestworks/ingest/regions"
)

// TestRegionsAreNamedFromTheCatalogue: the pages name regions from the
// catalogue the server is handed, a code it does not list by its English
// name and under Elsewhere, after the areas; a search hit names its first
// regions and counts the rest.
func TestRegionsAreNamedFromTheCatalogue(t *testing.T) {
	t.Parallel()
	cat := regions.Catalogue{{Code: "GB", Name: "Reino Unido", Area: regions.Europe}, {Code: "US", Name: "Estados Unidos", Area: regions.Americas}}
	p := places{cat: cat}
	got := p.areas([]string{"US", "GB", "JP"}, "GB")
	if len(got) != 3 || got[0].Name != regions.Americas || got[1].Regions[0] != (option{"GB", "Reino Unido", true}) ||
		got[2].Name != elsewhere || got[2].Regions[0].Name != "Japan" {
		t.Errorf("areas: %+v", got)
	}
	if l := p.list([]string{"US", "GB", "JP", "DE", "FR"}); len(l.Shown) != 3 || l.Shown[1].Name != "Reino Unido" || l.More != 2 || l.MoreNames != "Germany, France" {
		t.Errorf("a hit's regions: %+v", l)
	}
	if got := p.chart("US", "10"); got != "Estados Unidos · music" {
		t.Errorf("chart label %q", got)
	}

	now := time.Date(2026, 11, 20, 12, 0, 0, 0, time.UTC)
	_, srv := leadServerWith(t, Config{Regions: cat}, &now, "GB", "US")
	page := string(fetch(t, srv.URL+"/charts/GB"))
	for _, want := range []string{`<title>Reino Unido chart · ingest, YouTube trending charts</title>`, `<span title="region GB">Reino Unido</span> trending chart`,
		`<optgroup label="Americas"><option value="US">Estados Unidos (US)</option></optgroup><optgroup label="Europe"><option value="GB" selected>Reino Unido (GB)</option>`} {
		if !strings.Contains(page, want) {
			t.Errorf("GB's chart page: no %s", want)
		}
	}
}

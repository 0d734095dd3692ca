package web

import (
	"slices"
	"strings"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/regions"
	"github.com/ingestworks/ingest/store"
)

// A reader sees a region by its name, from the catalogue the server is
// handed (Config.Regions), with its code beside it where that helps; a
// hundred regions are offered grouped by area, each area by name.

// elsewhere is the area of a region the catalogue does not list (a chart
// stored before the catalogue changed).
const elsewhere = "Elsewhere"

// places names regions from a catalogue.
type places struct{ cat regions.Catalogue }

// name is a region's name: the catalogue's, else the English one the
// language data gives, else its code.
func (p places) name(code string) string {
	if r, ok := p.cat.Find(code); ok && r.Name != "" {
		return r.Name
	}
	return regionName(code)
}

// in names a region as a sentence does after "in": "the United States",
// "Japan".
func (p places) in(code string) string {
	return withThe(p.name(code))
}

// withThe is a region's name with "the" when English says it: unions and
// republics by their kind, plural names, islands.
func withThe(name string) string {
	switch {
	case strings.HasPrefix(name, "United "), strings.HasSuffix(name, " Republic"), strings.HasSuffix(name, "Islands"),
		theNames[name]:
		return "the " + name
	}
	return name
}

// theNames are the region names English says with "the" that withThe's
// rules do not find.
var theNames = map[string]bool{"Netherlands": true, "Philippines": true, "Bahamas": true, "Gambia": true,
	"Maldives": true, "Comoros": true, "Seychelles": true, "Vatican City": true}

// chart names a chart for a reader: "United States", or "United States ·
// music" for a category.
func (p places) chart(region, category string) string {
	if category == "" {
		return p.name(region)
	}
	return p.name(region) + " · " + ingest.CategoryName(category)
}

// area is one area's regions, each by name, as a page lists them.
type area struct {
	Name, ID string
	Regions  []option
}

// areas groups codes by area in regions.Areas' order (an area the
// catalogue names that Areas does not, then elsewhere, after them), each
// area's regions sorted by name; current is marked.
func (p places) areas(codes []string, current string) []area {
	by := map[string][]option{}
	for _, code := range codes {
		a := elsewhere
		if r, ok := p.cat.Find(code); ok && r.Area != "" {
			a = r.Area
		}
		by[a] = append(by[a], option{Code: code, Name: p.name(code), Current: code == current})
	}
	order := slices.Clone(regions.Areas)
	var extra []string
	for a := range by {
		if !slices.Contains(order, a) && a != elsewhere {
			extra = append(extra, a)
		}
	}
	slices.Sort(extra)
	var out []area
	for _, a := range append(append(order, extra...), elsewhere) {
		os := by[a]
		if len(os) == 0 {
			continue
		}
		slices.SortFunc(os, func(x, y option) int { return strings.Compare(x.Name, y.Name) })
		out = append(out, area{Name: a, ID: areaID(a), Regions: os})
	}
	return out
}

// areaID is an area's name as an element id: "middle-east-north-africa".
func areaID(name string) string {
	return strings.Join(strings.FieldsFunc(strings.ToLower(name), func(r rune) bool {
		return (r < 'a' || r > 'z') && (r < '0' || r > '9')
	}), "-")
}

// pickerAreas are the regions with a chart, grouped by area, for a select.
func (p places) pickerAreas(charts []store.ChartName, current string) []area {
	var codes []string
	seen := map[string]bool{}
	for _, c := range charts {
		if !seen[c.Region] {
			seen[c.Region] = true
			codes = append(codes, c.Region)
		}
	}
	return p.areas(codes, current)
}

// regionList is a video's regions as a search hit lists them: the first
// few by name, and how many more, named in a title.
type regionList struct {
	Shown     []option
	More      int
	MoreNames string
}

// hitRegionsShown is how many of a hit's regions are named on its line.
const hitRegionsShown = 3

func (p places) list(codes []string) regionList {
	var l regionList
	var rest []string
	for i, code := range codes {
		if i < hitRegionsShown {
			l.Shown = append(l.Shown, option{Code: code, Name: p.name(code)})
			continue
		}
		rest = append(rest, p.name(code))
	}
	l.More, l.MoreNames = len(rest), strings.Join(rest, ", ")
	return l
}

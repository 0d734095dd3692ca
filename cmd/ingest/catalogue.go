package main

import (
	"strings"

	"github.com/ingestworks/ingest/regions"
)

// selectsAll reports whether a --regions value names "all": the regions
// of the catalogue, which the database keeps and reads again daily.
func selectsAll(list string) bool {
	for _, item := range strings.Split(list, ",") {
		name, _, _ := strings.Cut(item, ":")
		if strings.EqualFold(strings.TrimSpace(name), "all") {
			return true
		}
	}
	return false
}

// selectFrom is what selects --regions from the region catalogue the
// database keeps, once it is open: nil when --regions does not name all,
// its codes then standing as checked against the built-in copy.
func selectFrom(list string, given bool) func(regions.Catalogue) ([]regions.Chart, error) {
	if !selectsAll(list) {
		return nil
	}
	return func(cat regions.Catalogue) ([]regions.Chart, error) { return parseRegions(list, given, cat) }
}

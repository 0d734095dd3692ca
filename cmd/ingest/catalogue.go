package main

import (
	"context"
	"strings"
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

// fromCatalogue reads the region catalogue of p's database, first from the
// upstream when it is absent or a day old and either a daemon runs or
// --regions names all, and selects --regions from it when it names all;
// codes, checked against the built-in copy, stand otherwise.
func (f *runFlags) fromCatalogue(ctx context.Context, s *settings, p *pipeline, codes []string) ([]string, error) {
	all := selectsAll(f.regions)
	cat := s.host().Catalogue(ctx, p, !f.once || all)
	if !all {
		return codes, nil
	}
	return parseRegions(f.regions, f.regionsGiven, cat)
}

// Package regions holds what a region is: the catalogue of the regions the
// upstream charts (codes and names, from i18nRegions.list, with a built-in
// copy for a first run and an offline host), the default regions, and the
// --regions syntax that selects charts and gives each a tier (how often,
// relative to the others) and a depth (how much of the chart a pass reads).
//
// It imports only the standard library: the job layer, the plan, the pages
// and the fake upstream all read regions from here.
package regions

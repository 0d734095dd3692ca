package ingest

import "strings"

// DefaultRegions are the regions whose charts ingest keeps when --regions is
// not given, in schedule order: region i runs at offset i x every/n. It is
// the one list: the schedule, the fake upstream's fixtures, the year builder
// and every help text read it, so a default region is added here alone. It
// lives in the root, not in jobs/, because the fake upstream serves the
// adapters' tests and the year builder writes with the store: neither may
// reach up to the job layer for it.
var DefaultRegions = []string{"US", "GB", "DE", "FR", "IN", "BR", "AU", "CA"}

// DefaultRegionsText is DefaultRegions as help texts print it: "US, GB, ...".
func DefaultRegionsText() string { return strings.Join(DefaultRegions, ", ") }

// ChartName names a chart as leases, schedules, pacing, logs and errors
// do: its region (US), or region/category (US/10) for a category's chart.
func ChartName(region, category string) string {
	if category == "" {
		return region
	}
	return region + "/" + category
}

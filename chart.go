package ingest

// ChartName names a chart as leases, schedules, pacing, logs and errors
// do: its region (US), or region/category (US/10) for a category's chart.
func ChartName(region, category string) string {
	if category == "" {
		return region
	}
	return region + "/" + category
}

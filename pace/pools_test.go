package pace_test

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/pace"
)

// poolTable is what pools of given sizes give the eight default regions'
// own charts and sixteen category charts (two categories each), each a
// 200-video chart of four units, at --every 1h and the default staleness
// bound, as the planner makes it: the table of docs/explanation/pacing.md.
func poolTable() string {
	var b strings.Builder
	b.WriteString("| `limit - reserve` | units an hour | each region's own chart | category charts |\n")
	b.WriteString("|---:|---:|---|---|\n")
	day := time.Date(2026, 11, 18, 12, 0, 0, 0, ingest.UpstreamZone) // a day of 24 hours
	for _, units := range []int64{40, 100, 200, 400, 800, 950, 1600, 9500} {
		pool := ingest.Pool{Name: ingest.DefaultPool, Limit: units, Window: 24 * time.Hour, Day: ingest.UpstreamZone}
		var entries []pace.Entry
		for _, code := range regions8 {
			entries = append(entries, entry(code, 0, time.Hour, 4))
		}
		for _, cat := range categories {
			for _, code := range regions8 {
				entries = append(entries, entry(code+"/"+cat, 1, time.Hour, 4))
			}
		}
		slack := pace.Slack(pool, entries) + float64(len(regions8)) // the category names, once a day each
		rate := pace.Sustainable(pool, day, slack)
		plan := pace.Make([]pace.Budget{{Pool: pool.Name, Rate: rate, Units: rate * 86400, Horizon: 24 * time.Hour}}, entries, 0)
		fmt.Fprintf(&b, "| %d | %.1f | %s | %s |\n", units, rate*3600, regionsText(plan), everyText(plan.Every["US/"+categories[0]]))
	}
	return b.String()
}

// regionsText is the regions' cadence, and which are dropped.
func regionsText(plan pace.Plan) string {
	var dropped []string
	for _, code := range regions8 {
		if plan.Dropped[code] {
			dropped = append(dropped, code)
		}
	}
	text := everyText(plan.Every[regions8[0]])
	if len(dropped) > 0 {
		text += "; drops " + strings.Join(dropped, ", ")
	}
	return text
}

// everyText is a cadence to the minute, as the table says it.
func everyText(every time.Duration) string {
	if every == pace.Never {
		return "dropped"
	}
	every = every.Round(time.Minute)
	h, m := every/time.Hour, (every%time.Hour)/time.Minute
	switch {
	case m == 0:
		return fmt.Sprintf("every %dh", h)
	case h == 0:
		return fmt.Sprintf("every %dm", m)
	}
	return fmt.Sprintf("every %dh%02dm", h, m)
}

// The table of pool sizes in docs/explanation/pacing.md is the planner's own.
func TestPoolTable(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile("../docs/explanation/pacing.md")
	if err != nil {
		t.Fatal(err)
	}
	const begin, end = "<!-- pool table: pace.TestPoolTable -->\n", "<!-- end of pool table -->"
	doc := string(b)
	i, j := strings.Index(doc, begin), strings.Index(doc, end)
	if i < 0 || j < i {
		t.Fatalf("docs/explanation/pacing.md has no pool table between %q and %q", begin, end)
	}
	if got, want := doc[i+len(begin):j], poolTable(); got != want {
		t.Errorf("docs/explanation/pacing.md's pool table is not the planner's; want\n%s", want)
	}
}

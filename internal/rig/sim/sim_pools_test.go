package sim

import (
	"fmt"
	"testing"
	"time"

	"github.com/ingestworks/ingest/costs"
)

// scarceTwoPools is scarceOver with videos.list (the charts' pages and the
// refresh) priced in a second pool besides the default: trending, a budget
// of the daemon's own of trending less its reserve over window, without a
// calendar day, inside the default pool, which the upstream never counts. A call of videos.list is
// admitted only if both hold it, and counted in both.
func scarceTwoPools(t *testing.T, limit, reserve int, window time.Duration, trending, trendingReserve int, trendingWindow time.Duration) Shape {
	s := shipped()
	c, err := costs.Load("two-pools.yaml", []byte(fmt.Sprintf(`pools:
  default:  {limit: %d, reserve: %d, window: %s, day: America/Los_Angeles}
  search:   {limit: 100, reserve: 5,  window: 24h, day: America/Los_Angeles}
  stats:    {limit: 10000, reserve: 0, window: 24h, day: America/Los_Angeles}
  trending: {limit: %d, reserve: %d, window: %s}
operations:
  videos.list:          {default: 1, trending: 1}
  videoCategories.list: {default: 1}
  i18nRegions.list:     {default: 1}
  search.list:          {search: 1}
  videos.batchGetStats: {stats: 1}
`, limit, reserve, window, trending, trendingReserve, trendingWindow)))
	if err != nil {
		t.Fatal(err)
	}
	s.Costs = c
	return s
}

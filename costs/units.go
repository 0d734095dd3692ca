package costs

import (
	"fmt"
	"sort"
	"strings"

	"github.com/ingestworks/ingest"
)

// PerFetch is what one f costs by c, in units by pool: the charges of
// every operation it calls. An operation c does not price is an error
// naming it.
func PerFetch(c *ingest.Costs, f ingest.Fetch) (map[string]int64, error) {
	cost := map[string]int64{}
	for _, op := range f.Calls() {
		charges, err := c.Op(op)
		if err != nil {
			return nil, err
		}
		for _, ch := range charges {
			cost[ch.Pool] += ch.Units
		}
	}
	return cost, nil
}

// PoolUnits prints units by pool, in the pools' name order: "default
// 101, search 1".
func PoolUnits(m map[string]int64) string {
	pools := make([]string, 0, len(m))
	for p := range m {
		pools = append(pools, p)
	}
	sort.Strings(pools)
	parts := make([]string, len(pools))
	for i, p := range pools {
		parts[i] = fmt.Sprintf("%s %d", p, m[p])
	}
	return strings.Join(parts, ", ")
}

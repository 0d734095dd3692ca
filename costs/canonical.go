package costs

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"sort"
	"strings"

	"github.com/ingestworks/ingest"
)

// Canonical writes c as a costs file in one form (pools and operations in
// name order, every field spelled out), which Parse reads back into the
// same costs: what a daemon records as the costs it runs with, so that
// another command can plan with them and tell them from its own however
// each file was laid out.
func Canonical(c *ingest.Costs) []byte {
	var b strings.Builder
	b.WriteString("pools:\n")
	for _, p := range c.Pools {
		fmt.Fprintf(&b, "  %s: {limit: %d, reserve: %d, window: %s", p.Name, p.Limit, p.Reserve, p.Window)
		if p.Day != nil {
			fmt.Fprintf(&b, ", day: %s", p.Day)
		}
		if p.FailOpen.MaxCost > 0 || p.FailOpen.Budget > 0 {
			fmt.Fprintf(&b, ", fail_open: {max_cost: %d, budget: %d}", p.FailOpen.MaxCost, p.FailOpen.Budget)
		}
		b.WriteString("}\n")
	}
	b.WriteString("operations:\n")
	ops := make([]string, 0, len(c.Operations))
	for op := range c.Operations {
		ops = append(ops, op)
	}
	sort.Strings(ops)
	for _, op := range ops {
		fmt.Fprintf(&b, "  %s: %s\n", op, yamlCharges(c.Operations[op]))
	}
	return []byte(b.String())
}

// Hash names c by its canonical form: two files that give the same pools
// and prices have the same hash.
func Hash(c *ingest.Costs) string {
	sum := sha256.Sum256(Canonical(c))
	return hex.EncodeToString(sum[:6])
}

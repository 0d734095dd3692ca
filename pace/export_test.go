package pace

import (
	"time"

	"github.com/ingestworks/ingest"
)

// BudgetOf is a pool's budget with nothing beside the entries' passes: a
// worker alone in the pool, as the budget's own tests read it.
func BudgetOf(st ingest.PoolState, pool ingest.Pool, now time.Time, mine []Spent, slack float64) Budget {
	return budgetBeside(st, pool, now, mine, slack, beside{})
}

package ledger

import (
	"context"
	"fmt"
	"time"
)

// ClientUnits returns what each of the proxy's clients spent of quotaKey's
// pools from since on, by client and pool, given-back calls left out: the
// book the limiter keeps is the one count of a client's day, so that every
// proxy on the database reads the same spend.
func (l *Ledger) ClientUnits(ctx context.Context, quotaKey string, since time.Time) (map[string]map[string]int64, error) {
	rows, err := l.r.QueryContext(ctx, `
SELECT client, pool, sum(units) FROM ledger
WHERE quota_key = ? AND at_ms >= ? AND client <> ''`+notGivenBack+`
GROUP BY client, pool`, quotaKey, msOf(since))
	if err != nil {
		return nil, fmt.Errorf("clients' units of %s: %w", quotaKey, err)
	}
	defer rows.Close()
	out := map[string]map[string]int64{}
	for rows.Next() {
		var client, pool string
		var units int64
		if err := rows.Scan(&client, &pool, &units); err != nil {
			return nil, fmt.Errorf("clients' units of %s: %w", quotaKey, err)
		}
		if out[client] == nil {
			out[client] = map[string]int64{}
		}
		out[client][pool] += units
	}
	return out, rows.Err()
}

package ledger

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/ingestworks/ingest"
)

// RecordUnknown keeps a decision of unknown outcome until it is resolved.
func (l *Ledger) RecordUnknown(ctx context.Context, u ingest.Unknown) error {
	var cs []string
	for _, c := range u.Charges {
		cs = append(cs, c.Pool+"="+strconv.FormatInt(c.Units, 10))
	}
	_, err := l.w.ExecContext(ctx, `INSERT INTO ledger_unknown (quota_key, instance, token, op, at_ms, charges)
VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`, u.QuotaKey, u.Instance, u.Token, u.Op, msOf(u.At), strings.Join(cs, ","))
	if err != nil {
		return fmt.Errorf("record unknown outcome %s: %w", u.Op, err)
	}
	return nil
}

// Unknowns lists the decisions of unknown outcome of quotaKey not resolved
// yet, oldest first.
func (l *Ledger) Unknowns(ctx context.Context, quotaKey string) ([]ingest.Unknown, error) {
	rows, err := l.r.QueryContext(ctx, `SELECT instance, token, op, at_ms, charges FROM ledger_unknown
WHERE quota_key = ? ORDER BY at_ms, instance, token`, quotaKey)
	if err != nil {
		return nil, fmt.Errorf("unknown outcomes of %s: %w", quotaKey, err)
	}
	defer rows.Close()
	var out []ingest.Unknown
	for rows.Next() {
		u := ingest.Unknown{QuotaKey: quotaKey}
		var at int64
		var charges string
		if err := rows.Scan(&u.Instance, &u.Token, &u.Op, &at, &charges); err != nil {
			return nil, fmt.Errorf("unknown outcomes of %s: %w", quotaKey, err)
		}
		u.At = time.UnixMilli(at).UTC()
		for _, c := range strings.Split(charges, ",") {
			pool, units, _ := strings.Cut(c, "=")
			n, err := strconv.ParseInt(units, 10, 64)
			if err != nil {
				return nil, fmt.Errorf("unknown outcomes of %s: charges %q: %w", quotaKey, charges, err)
			}
			u.Charges = append(u.Charges, ingest.Charge{Pool: pool, Units: n})
		}
		out = append(out, u)
	}
	return out, rows.Err()
}

// ResolveUnknown ends a decision of unknown outcome, at at (the house
// clock's). call is the call the limiter had admitted for it and has given
// back since it was never made: it is written to the ledger as admitted and
// given back. nil: the limiter
// never admitted it. Each step is idempotent, so resolving again after a
// failure part way changes nothing.
func (l *Ledger) ResolveUnknown(ctx context.Context, u ingest.Unknown, call *ingest.Call, at time.Time) error {
	if call != nil {
		if err := l.RecordCall(ctx, *call); err != nil {
			return err
		}
		if err := l.RecordGiveBack(ctx, *call, at); err != nil {
			return err
		}
	}
	_, err := l.w.ExecContext(ctx, `DELETE FROM ledger_unknown WHERE quota_key = ? AND instance = ? AND token = ?`,
		u.QuotaKey, u.Instance, u.Token)
	if err != nil {
		return fmt.Errorf("resolve unknown outcome %s: %w", u.Op, err)
	}
	return nil
}

package quota

import (
	"cmp"
	"context"
	"fmt"
	"strings"
	"time"
)

// Text is the status as quota show prints it after the pools: each ledger
// the limiter knows (the database that spent, where it was last seen, its
// last admitted call), then, when the limiter lost data, what it waits for.
func (st Status) Text() string {
	var b strings.Builder
	for _, l := range st.Ledgers {
		fmt.Fprintf(&b, "ledger %s at %s: last call %s at %s\n", l.Ledger, l.Where, l.Mark,
			time.UnixMilli(l.At).UTC().Format(time.RFC3339))
	}
	b.WriteString(st.recovery())
	return b.String()
}

// recovery says what a limiter that lost data waits for; "" when it waits
// for nothing.
func (st Status) recovery() string {
	var waiting []string
	for _, p := range st.Pools {
		if !p.WaitUntil.IsZero() {
			waiting = append(waiting, fmt.Sprintf("%s until %s", p.Pool, p.WaitUntil.UTC().Format(time.RFC3339)))
		}
	}
	if len(waiting) == 0 {
		return ""
	}
	out := fmt.Sprintf("recovering from a data loss: metered calls wait (%s)\n", strings.Join(waiting, ", "))
	if len(st.Need) == 0 {
		return out + "  no ledger's copy could tell which ledgers spent: the wait ends with time, or with `ingest quota restore --ledger DB...`\n"
	}
	where := map[string]string{}
	for _, l := range st.Ledgers {
		where[l.Ledger] = l.Ledger + " (" + l.Where + ")"
	}
	name := func(ids []string) string {
		var out []string
		for _, id := range ids {
			out = append(out, cmp.Or(where[id], id))
		}
		return cmp.Or(strings.Join(out, ", "), "none yet")
	}
	return out + fmt.Sprintf("  waiting for the ledgers: %s; put back: %s\n", name(st.Need), name(st.Done))
}

// Readiness is ingest check's word on a Redis limiter that holds this
// costs file's pools: whether it lost its data (no configuration, yet the
// key was created: this ledger spent in its span) and how it keeps it. The
// error is ErrNotApplied when it holds no configuration for a key this
// ledger never spent on.
func (r *Redis) Readiness(ctx context.Context) (string, error) {
	detail := "the limiter holds this costs file's pools"
	if err := r.Created(ctx); err != nil {
		return "", err
	}
	if cur, err := r.Config(ctx); err == nil && !held(cur) {
		detail = "the limiter holds no configuration, but this database's ledger spent in its span: Redis lost data; " +
			"the first run puts its calls back and waits for the other hosts (or run `ingest quota restore --ledger DB...`)"
	}
	kept, how, err := r.Persistence(ctx)
	switch {
	case err != nil:
		detail += "; persistence unknown (" + err.Error() + ")"
	case !kept:
		detail += "; WARNING: Redis keeps " + how + ": set appendonly yes (docs/quota.md)"
	default:
		detail += "; Redis keeps " + how
	}
	return detail, nil
}

package main

import (
	"cmp"
	"fmt"
	"strings"
	"time"

	"github.com/ingestworks/ingest/quota"
)

// statusText is a Redis limiter's status as quota show prints it after the
// pools: each ledger the limiter knows (the database that spent, where it
// was last seen, its last admitted call), then, when the limiter lost
// data, what it waits for.
func statusText(st quota.Status) string {
	var b strings.Builder
	for _, l := range st.Ledgers {
		fmt.Fprintf(&b, "ledger %s at %s: last call %s at %s\n", l.Ledger, l.Where, l.Mark,
			time.UnixMilli(l.At).UTC().Format(time.RFC3339))
	}
	b.WriteString(recovery(st))
	return b.String()
}

// recovery says what a limiter that lost data waits for; "" when it waits
// for nothing.
func recovery(st quota.Status) string {
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

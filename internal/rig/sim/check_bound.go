package sim

import (
	"fmt"
	"time"

	"github.com/ingestworks/ingest"
)

// decisionSlack is how much of an attempt's bound may pass before its
// request goes: the limiter's decision, which the bound includes.
const decisionSlack = 2 * time.Second

// checkBoundsKept: every call its client gave up at its deadline was on
// the wire for its delivery bound (ingest.Delivery), less the limiter's
// decision: the bound starts before the limiter is asked, and nothing
// else comes between (docs/explanation/quota.md, "A call's delivery"). A
// clock read of the upstream's is asked before the bound, within a
// budget of its own, so that a slow upstream's answer to it never spends
// the call's (docs/explanation/redis.md): a call given up sooner was
// charged and tried again for the bound spent before it was sent.
func checkBoundsKept(h *History) []string {
	var short []string
	for _, c := range h.Calls {
		if on := c.At.Sub(c.Sent); c.Deadline && on < ingest.Delivery-decisionSlack {
			short = append(short, fmt.Sprintf("%s by the %s at %s, %s after it reached the upstream", callKey(c), c.Worker,
				c.Sent.UTC().Format(time.RFC3339), on))
		}
	}
	if len(short) == 0 {
		return nil
	}
	return []string{fmt.Sprintf("%d calls were given up at their deadline sooner than the delivery bound (%s) less the limiter's decision after they reached the upstream, the bound spent before they were sent: %s",
		len(short), ingest.Delivery, firstFew(short))}
}

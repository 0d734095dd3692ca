package sim

import (
	"fmt"
	"time"
)

// lossLook is how long after a loss of the Redis the checker reads the
// limiter's counts: past the refill from the daemon's own ledger, the one
// ledger that spent, and within the pools' window.
const lossLook = time.Hour

// checkRefilled: a Redis that lost its data counts again, once refilled,
// every unit the upstream charged in each pool's window (docs/contract.md:
// a loss stays a loss). The limiter admits before the call, so its count
// may run ahead of the charges by calls in flight, never behind them.
func checkRefilled(h *History) []string {
	var out []string
	for _, lk := range h.Looks {
		for _, p := range h.Costs.Pools {
			charged := windowCharged(h, p.Name, lk.At.Add(-p.Window), lk.At)
			if used := lk.Used[p.Name]; used < charged {
				out = append(out, fmt.Sprintf("at %s, after the Redis lost its data, the limiter counted %d units of %s in its window; the upstream charged %d",
					lk.At.UTC().Format(time.RFC3339), used, p.Name, charged))
			}
		}
	}
	return out
}

package ingest

import (
	_ "embed"
	"fmt"
	"time"
)

// CostsYAML is the costs.yaml built into the binary; package costs reads
// it (costs.Default) and any other costs file.
//
//go:embed costs.yaml
var CostsYAML []byte

// Pool is a budget inside one upstream quota: Limit units, less a Reserve
// left for people, over a trailing Window and, when Day is set, over each
// calendar day of that zone as well.
type Pool struct {
	Name    string
	Limit   int64
	Reserve int64
	Window  time.Duration
	// Day is the zone whose calendar days the pool also counts (the
	// upstream's day); nil when the pool has only its sliding window.
	Day *time.Location
	// FailOpen says what may go ahead unmetered while the shared limiter
	// cannot be reached; the zero value keeps the pool closed.
	FailOpen FailOpen
}

// FailOpen is a pool's policy while the shared limiter cannot be reached: a
// call whose charge in the pool is at most MaxCost goes ahead unmetered,
// until this process has taken Budget units unmetered in the pool during the
// outage.
type FailOpen struct {
	MaxCost int64
	Budget  int64
}

// DayName is the pool's day zone as costs.yaml names it, "" for none.
func (p Pool) DayName() string {
	if p.Day == nil {
		return ""
	}
	return p.Day.String()
}

// Capacity is what the limiter may admit in any trailing window.
func (p Pool) Capacity() int64 { return p.Limit - p.Reserve }

// Costs is a parsed costs.yaml: the pools and what each operation costs in
// them.
type Costs struct {
	Pools      []Pool              // sorted by name
	Operations map[string][]Charge // charges sorted by pool name
}

// Delivery bounds how long after the limiter admits a call the upstream
// can still receive it: the worker gives each attempt this long from
// before it asks the limiter, and a connection it gives up on is reset,
// so that nothing of the request leaves after. A call therefore holds its
// place in its pool for the window and this bound: the upstream, which
// counts a call when it arrives, never sees more in a window than the
// limiter admitted (docs/explanation/quota.md, "A call's delivery").
const Delivery = 20 * time.Second

// Span is how far back the quota looks: the longest window a call is held
// in (its pool's window and Delivery), or a calendar day of 25 hours (the
// day the clocks go back), whichever is longer. A limiter remembers that
// long, and refills from that much of the ledger.
func (c *Costs) Span() time.Duration {
	d := 25 * time.Hour
	for _, p := range c.Pools {
		d = max(d, p.Window+Delivery)
	}
	return d
}

// Pool returns the pool called name.
func (c *Costs) Pool(name string) (Pool, bool) {
	for _, p := range c.Pools {
		if p.Name == name {
			return p, true
		}
	}
	return Pool{}, false
}

// Op returns the charges of one call of op, or an error naming the
// operation when costs.yaml does not list it.
func (c *Costs) Op(op string) ([]Charge, error) {
	ch, ok := c.Operations[op]
	if !ok {
		return nil, fmt.Errorf("costs: operation %q is not in costs.yaml", op)
	}
	return ch, nil
}

// DefaultPool is the pool that stands for the project's whole daily quota
// (the upstream's 10,000 units); the per-method buckets are pools of their
// own.
const DefaultPool = "default"

// BlockedPools is which pools an exhausted upstream quota blocks: the pools
// other than default that the operation draws from when a per-method
// bucket is spent, else the default pool.
func (c *Costs) BlockedPools(e *QuotaExhaustedError) []string {
	if !e.PerMethod {
		return []string{DefaultPool}
	}
	charges, _ := c.Op(e.Op)
	var pools []string
	for _, ch := range charges {
		if ch.Pool != DefaultPool {
			pools = append(pools, ch.Pool)
		}
	}
	if len(pools) == 0 {
		return []string{DefaultPool}
	}
	return pools
}

// SpentNothing reports whether units, by pool, are all zero: a run that
// failed before the limiter admitted any of its calls.
func SpentNothing(units map[string]int64) bool {
	for _, u := range units {
		if u != 0 {
			return false
		}
	}
	return true
}

package ingest

import (
	_ "embed"
	"fmt"
	"sort"
	"strconv"
	"time"

	"gopkg.in/yaml.v3"
)

//go:embed costs.yaml
var defaultCosts []byte

// MaxUnits is the largest limit, cost or budget a costs file may give. The
// Redis limiter counts in Lua numbers (doubles, exact integers only up to
// 2^53) and the embedded one in int64: a window's running totals, a day's,
// and what a refill or a recovery adds on top of them, sum many amounts of
// at most this size, and at 10^12 those sums stay thousands of times below
// 2^53, so both backends decide every admission exactly and alike.
const MaxUnits = 1_000_000_000_000

// MaxWindow is the longest window a pool may have: the limiter remembers a
// window's calls, and the ledger is read that far back to refill it.
const MaxWindow = 31 * 24 * time.Hour

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

// DefaultCosts returns the costs.yaml built into the binary.
func DefaultCosts() *Costs {
	c, err := LoadCosts("costs.yaml (built in)", defaultCosts)
	if err != nil {
		panic(err)
	}
	return c
}

// LoadCosts parses a costs file the worker will run with: ParseCosts, and
// every operation the worker can call (Operations) must be priced, so that
// a missing price stops the worker before it spends anything.
func LoadCosts(file string, data []byte) (*Costs, error) {
	c, err := ParseCosts(file, data)
	if err != nil {
		return nil, err
	}
	return c, c.requireOps(file, data)
}

// requireOps names the first operation the worker calls that c does not price.
func (c *Costs) requireOps(file string, data []byte) error {
	for _, op := range Operations {
		if _, ok := c.Operations[op.Name]; !ok {
			return &CostsError{File: file, Line: operationsLine(data), Field: "operations." + op.Name,
				Msg: "missing: the worker calls it, so it must be priced (the upstream charges " + yamlCharges(op.Cost) + ")"}
		}
	}
	return nil
}

// yamlCharges writes charges as costs.yaml does: {default: 1}.
func yamlCharges(charges []Charge) string {
	s := "{"
	for i, ch := range charges {
		if i > 0 {
			s += ", "
		}
		s += ch.Pool + ": " + strconv.FormatInt(ch.Units, 10)
	}
	return s + "}"
}

// operationsLine is the line of the operations key, for errors about it.
func operationsLine(data []byte) int {
	var doc yaml.Node
	if yaml.Unmarshal(data, &doc) != nil || len(doc.Content) == 0 {
		return 1
	}
	top := doc.Content[0]
	for i := 0; i+1 < len(top.Content); i += 2 {
		if top.Content[i].Value == "operations" {
			return top.Content[i].Line
		}
	}
	return top.Line
}

// Span is how far back the quota looks: the longest window, or a calendar
// day of 25 hours (the day the clocks go back), whichever is longer. A
// limiter remembers that long, and refills from that much of the ledger.
func (c *Costs) Span() time.Duration {
	d := 25 * time.Hour
	for _, p := range c.Pools {
		d = max(d, p.Window)
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

// CostsError names the file, line and field of a bad costs file.
type CostsError struct {
	File  string
	Line  int
	Field string
	Msg   string
}

func (e *CostsError) Error() string {
	if e.Field == "" {
		return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg)
	}
	return fmt.Sprintf("%s:%d: %s: %s", e.File, e.Line, e.Field, e.Msg)
}

// ParseCosts reads a costs file strictly: unknown keys, unknown pools, costs
// or limits that are not positive or above MaxUnits, names that are not
// plain identifiers, a reserve not below its limit, a window that does not
// parse or is longer than MaxWindow and a cost that can never fit its pool
// are errors naming file, line and field.
func ParseCosts(file string, data []byte) (*Costs, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, &CostsError{File: file, Line: yamlLine(err), Msg: err.Error()}
	}
	p := costsParser{file: file}
	if len(doc.Content) == 0 {
		return nil, p.fail(&doc, "", "empty file")
	}
	return p.top(doc.Content[0])
}

type costsParser struct{ file string }

func (p costsParser) fail(n *yaml.Node, field, format string, args ...any) error {
	return &CostsError{File: p.file, Line: n.Line, Field: field, Msg: fmt.Sprintf(format, args...)}
}

// mapping walks a mapping node, refusing duplicate keys.
func (p costsParser) mapping(n *yaml.Node, field string, each func(key string, k, v *yaml.Node) error) error {
	if n.Kind != yaml.MappingNode {
		return p.fail(n, field, "must be a mapping")
	}
	seen := map[string]bool{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		name := join(field, k.Value)
		if seen[k.Value] {
			return p.fail(k, name, "duplicate key")
		}
		seen[k.Value] = true
		if err := each(k.Value, k, v); err != nil {
			return err
		}
	}
	return nil
}

func join(field, key string) string {
	if field == "" {
		return key
	}
	return field + "." + key
}

func (p costsParser) top(n *yaml.Node) (*Costs, error) {
	c := &Costs{Operations: map[string][]Charge{}}
	var opsNode *yaml.Node
	var have = map[string]bool{}
	err := p.mapping(n, "", func(key string, k, v *yaml.Node) error {
		have[key] = true
		switch key {
		case "fail_open_max_cost":
			return p.fail(k, key, "no longer read: the fail policy is per pool now; "+
				"write fail_open: {max_cost: %s, budget: N} under each pool that may go ahead unmetered while the limiter is down", v.Value)
		case "pools":
			return p.pools(v, c)
		case "operations":
			opsNode = v
			return nil
		}
		return p.fail(k, key, "unknown key (want pools, operations)")
	})
	if err != nil {
		return nil, err
	}
	for _, want := range []string{"pools", "operations"} {
		if !have[want] {
			return nil, p.fail(n, want, "missing")
		}
	}
	sort.Slice(c.Pools, func(i, j int) bool { return c.Pools[i].Name < c.Pools[j].Name })
	return c, p.operations(opsNode, c)
}

// integer parses a whole number that must be at least min.
func (p costsParser) integer(v *yaml.Node, field string, min int64) (int64, error) {
	if v.Kind != yaml.ScalarNode {
		return 0, p.fail(v, field, "must be a number")
	}
	u, err := strconv.ParseInt(v.Value, 10, 64)
	if err != nil {
		return 0, p.fail(v, field, "must be a whole number, got %q", v.Value)
	}
	if u > MaxUnits {
		return 0, p.fail(v, field, "at most %d, got %d (a window's sums must stay exact in both limiters)", int64(MaxUnits), u)
	}
	if u < min {
		if min == 1 {
			return 0, p.fail(v, field, "must be > 0, got %d", u)
		}
		return 0, p.fail(v, field, "must be >= %d, got %d", min, u)
	}
	return u, nil
}

// identifier refuses a pool or operation name that is not a plain
// identifier: the limiters and the ledger keep names inside keys and
// records whose separators are punctuation and control characters, so a
// name holding one could alias another pool's state.
func (p costsParser) identifier(k *yaml.Node, field, name string) error {
	if k.Kind != yaml.ScalarNode || name == "" {
		return p.fail(k, field, "a name must be a plain identifier (letters, digits, _, ., -)")
	}
	for _, r := range name {
		if !isIdentRune(r) {
			return p.fail(k, field, "%q is not a plain identifier (letters, digits, _, ., -): %q is not allowed", name, r)
		}
	}
	return nil
}

func isIdentRune(r rune) bool {
	return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '.' || r == '-'
}

func (p costsParser) pools(n *yaml.Node, c *Costs) error {
	err := p.mapping(n, "pools", func(name string, k, v *yaml.Node) error {
		if err := p.identifier(k, "pools", name); err != nil {
			return err
		}
		pool, err := p.pool(name, v)
		c.Pools = append(c.Pools, pool)
		return err
	})
	if err == nil && len(c.Pools) == 0 {
		return p.fail(n, "pools", "at least one pool is needed")
	}
	return err
}

func (p costsParser) pool(name string, n *yaml.Node) (Pool, error) {
	pool := Pool{Name: name}
	field := "pools." + name
	var limitNode, reserveNode, failNode *yaml.Node
	err := p.mapping(n, field, func(key string, k, v *yaml.Node) error {
		var err error
		switch key {
		case "limit":
			limitNode = v
			pool.Limit, err = p.integer(v, join(field, key), 1)
		case "reserve":
			reserveNode = v
			pool.Reserve, err = p.integer(v, join(field, key), 0)
		case "window":
			pool.Window, err = p.window(v, join(field, key))
		case "day":
			pool.Day, err = p.zone(v, join(field, key))
		case "fail_open":
			failNode = v
			pool.FailOpen, err = p.failOpen(v, join(field, key))
		default:
			err = p.fail(k, join(field, key), "unknown key (want limit, reserve, window, day, fail_open)")
		}
		return err
	})
	switch {
	case err != nil:
		return pool, err
	case limitNode == nil:
		return pool, p.fail(n, field+".limit", "missing")
	case pool.Window == 0:
		return pool, p.fail(n, field+".window", "missing")
	case pool.Reserve >= pool.Limit:
		return pool, p.fail(reserveNode, field+".reserve", "must be below limit %d, got %d", pool.Limit, pool.Reserve)
	case failNode != nil && pool.FailOpen.MaxCost > pool.Capacity():
		return pool, p.fail(failNode, field+".fail_open.max_cost", "must fit the pool (limit %d - reserve %d = %d), got %d",
			pool.Limit, pool.Reserve, pool.Capacity(), pool.FailOpen.MaxCost)
	}
	return pool, nil
}

// zone loads an IANA zone name; time/tzdata is linked in (reset.go), so it
// loads on images without a zone database.
func (p costsParser) zone(v *yaml.Node, field string) (*time.Location, error) {
	if v.Kind != yaml.ScalarNode || v.Value == "" || v.Value == "Local" {
		return nil, p.fail(v, field, "must be an IANA time zone like America/Los_Angeles, got %q", v.Value)
	}
	loc, err := time.LoadLocation(v.Value)
	if err != nil {
		return nil, p.fail(v, field, "unknown time zone %q (want an IANA name like America/Los_Angeles)", v.Value)
	}
	return loc, nil
}

func (p costsParser) failOpen(n *yaml.Node, field string) (FailOpen, error) {
	var f FailOpen
	err := p.mapping(n, field, func(key string, k, v *yaml.Node) error {
		var err error
		switch key {
		case "max_cost":
			f.MaxCost, err = p.integer(v, join(field, key), 1)
		case "budget":
			f.Budget, err = p.integer(v, join(field, key), 1)
		default:
			err = p.fail(k, join(field, key), "unknown key (want max_cost, budget)")
		}
		return err
	})
	switch {
	case err != nil:
		return f, err
	case f.MaxCost == 0:
		return f, p.fail(n, field+".max_cost", "missing")
	case f.Budget == 0:
		return f, p.fail(n, field+".budget", "missing")
	case f.Budget < f.MaxCost:
		return f, p.fail(n, field+".budget", "must be at least max_cost %d, got %d", f.MaxCost, f.Budget)
	}
	return f, nil
}

func (p costsParser) window(v *yaml.Node, field string) (time.Duration, error) {
	d, err := time.ParseDuration(v.Value)
	if err != nil || v.Kind != yaml.ScalarNode {
		return 0, p.fail(v, field, "must be a duration like 24h or 90s, got %q", v.Value)
	}
	if d < time.Millisecond {
		return 0, p.fail(v, field, "must be at least 1ms, got %s", d)
	}
	if d > MaxWindow {
		return 0, p.fail(v, field, "at most 31 days (744h), got %s", d)
	}
	return d, nil
}

func (p costsParser) operations(n *yaml.Node, c *Costs) error {
	err := p.mapping(n, "operations", func(op string, k, v *yaml.Node) error {
		if err := p.identifier(k, "operations", op); err != nil {
			return err
		}
		field := "operations." + op
		var charges []Charge
		err := p.mapping(v, field, func(pool string, pk, pv *yaml.Node) error {
			pl, ok := c.Pool(pool)
			if !ok {
				return p.fail(pk, join(field, pool), "unknown pool %q (pools are %s)", pool, c.poolNames())
			}
			u, err := p.integer(pv, join(field, pool), 1)
			if err == nil && u > pl.Capacity() {
				err = p.fail(pv, join(field, pool), "%d units can never fit pool %s (limit %d - reserve %d = %d)",
					u, pool, pl.Limit, pl.Reserve, pl.Capacity())
			}
			charges = append(charges, Charge{Pool: pool, Units: u})
			return err
		})
		if err == nil && len(charges) == 0 {
			err = p.fail(v, field, "must charge at least one pool")
		}
		sort.Slice(charges, func(i, j int) bool { return charges[i].Pool < charges[j].Pool })
		c.Operations[op] = charges
		return err
	})
	if err == nil && len(c.Operations) == 0 {
		return p.fail(n, "operations", "at least one operation is needed")
	}
	return err
}

func (c *Costs) poolNames() string {
	s := ""
	for i, p := range c.Pools {
		if i > 0 {
			s += ", "
		}
		s += p.Name
	}
	return s
}

// yamlLine digs the line number out of a yaml syntax error ("yaml: line 3: ...").
func yamlLine(err error) int {
	var line int
	if _, scanErr := fmt.Sscanf(err.Error(), "yaml: line %d:", &line); scanErr != nil {
		return 1
	}
	return line
}

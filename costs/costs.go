// Package costs reads costs.yaml, what each upstream operation costs in
// the quota's pools (ingest.Costs), strictly: every refusal names the
// file, the line and the field, and a costs file the worker runs with must
// price every operation it calls. Its Checker reads the other files
// written the same way (the API's plans: package ratelimit).
//
// What is where: the costs file's loader and checker: costs.Parse (strict:
// unknown keys, bad names, limits and windows out of range, a cost that
// never fits its pool, each named by file, line and field), costs.Load (and
// every operation the worker calls is priced), costs.Default (the built-in
// file); the largest units and window a file may give (MaxUnits, MaxWindow);
// what one fetch costs by pool (PerFetch) and units by pool as text
// (PoolUnits); its Checker reads the API's plans the same way.
package costs

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/ingestworks/ingest"
)

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

// Default returns the costs.yaml built into the binary.
func Default() *ingest.Costs {
	c, err := Load("costs.yaml (built in)", ingest.CostsYAML)
	if err != nil {
		panic(err)
	}
	return c
}

// Load parses a costs file the worker will run with: Parse, and
// every operation the worker can call (Operations) must be priced, so that
// a missing price stops the worker before it spends anything.
func Load(file string, data []byte) (*ingest.Costs, error) {
	c, err := Parse(file, data)
	if err != nil {
		return nil, err
	}
	return c, requireOps(c, file, data)
}

// requireOps names the first operation the worker calls that c does not price.
func requireOps(c *ingest.Costs, file string, data []byte) error {
	for _, op := range ingest.Operations {
		if _, ok := c.Operations[op.Name]; !ok {
			return &Error{File: file, Line: operationsLine(data), Field: "operations." + op.Name,
				Msg: "missing: the worker calls it, so it must be priced (the upstream charges " + yamlCharges(op.Cost) + ")"}
		}
	}
	var names []string
	for _, op := range ingest.Operations {
		names = append(names, op.Name)
	}
	for name := range c.Operations {
		if _, ok := ingest.OperationNamed(name); !ok {
			// Priced but never called: a misspelt name would leave the
			// operation it meant at the price a default gives it elsewhere.
			return &Error{File: file, Line: operationsLine(data), Field: "operations." + name,
				Msg: "unknown operation: the worker calls only " + strings.Join(names, ", ") + "; fix its name or remove it"}
		}
	}
	return nil
}

// yamlCharges writes charges as costs.yaml does: {default: 1}.
func yamlCharges(charges []ingest.Charge) string {
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

// Error names the file, line and field of a bad costs file (or of any
// file a Checker reads).
type Error struct {
	File  string
	Line  int
	Field string
	Msg   string
}

func (e *Error) Error() string {
	if e.Field == "" {
		return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg)
	}
	return fmt.Sprintf("%s:%d: %s: %s", e.File, e.Line, e.Field, e.Msg)
}

// Parse reads a costs file strictly: unknown keys, unknown pools, costs
// or limits that are not positive or above MaxUnits, names that are not
// plain identifiers, a reserve not below its limit, a window that does not
// parse or is longer than MaxWindow and a cost that can never fit its pool
// are errors naming file, line and field.
func Parse(file string, data []byte) (*ingest.Costs, error) {
	p := Checker{File: file}
	top, err := p.Document(data)
	if err != nil {
		return nil, err
	}
	return p.top(top)
}

// Checker reads a YAML file strictly, for Parse and for the other files
// read the same way (the API's plans, package ratelimit): what it refuses
// is an *Error naming the file, the line and the field.
type Checker struct{ File string }

// Document is the file's top node: a syntax error or an empty file is an
// error.
func (p Checker) Document(data []byte) (*yaml.Node, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, &Error{File: p.File, Line: yamlLine(err), Msg: err.Error()}
	}
	if len(doc.Content) == 0 {
		return nil, p.Fail(&doc, "", "empty file")
	}
	return doc.Content[0], nil
}

// Fail is an *Error at n's line.
func (p Checker) Fail(n *yaml.Node, field, format string, args ...any) error {
	return &Error{File: p.File, Line: n.Line, Field: field, Msg: fmt.Sprintf(format, args...)}
}

// Mapping walks a mapping node, refusing duplicate keys.
func (p Checker) Mapping(n *yaml.Node, field string, each func(key string, k, v *yaml.Node) error) error {
	if n.Kind != yaml.MappingNode {
		return p.Fail(n, field, "must be a mapping")
	}
	seen := map[string]bool{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		name := Join(field, k.Value)
		if seen[k.Value] {
			return p.Fail(k, name, "duplicate key")
		}
		seen[k.Value] = true
		if err := each(k.Value, k, v); err != nil {
			return err
		}
	}
	return nil
}

// Join is the field key of field: field.key, or key at the top.
func Join(field, key string) string {
	if field == "" {
		return key
	}
	return field + "." + key
}

func (p Checker) top(n *yaml.Node) (*ingest.Costs, error) {
	c := &ingest.Costs{Operations: map[string][]ingest.Charge{}}
	var opsNode *yaml.Node
	var have = map[string]bool{}
	err := p.Mapping(n, "", func(key string, k, v *yaml.Node) error {
		have[key] = true
		switch key {
		case "fail_open_max_cost":
			return p.Fail(k, key, "no longer read: the fail policy is per pool now; "+
				"write fail_open: {max_cost: %s, budget: N} under each pool that may go ahead unmetered while the limiter is down", v.Value)
		case "pools":
			return p.pools(v, c)
		case "operations":
			opsNode = v
			return nil
		}
		return p.Fail(k, key, "unknown key (want pools, operations)")
	})
	if err != nil {
		return nil, err
	}
	for _, want := range []string{"pools", "operations"} {
		if !have[want] {
			return nil, p.Fail(n, want, "missing")
		}
	}
	sort.Slice(c.Pools, func(i, j int) bool { return c.Pools[i].Name < c.Pools[j].Name })
	return c, p.operations(opsNode, c)
}

// Integer parses a whole number that must be at least min and at most
// MaxUnits.
func (p Checker) Integer(v *yaml.Node, field string, min int64) (int64, error) {
	if v.Kind != yaml.ScalarNode {
		return 0, p.Fail(v, field, "must be a number")
	}
	u, err := strconv.ParseInt(v.Value, 10, 64)
	if err != nil {
		return 0, p.Fail(v, field, "must be a whole number, got %q", v.Value)
	}
	if u > MaxUnits {
		return 0, p.Fail(v, field, "at most %d, got %d (a window's sums must stay exact in both limiters)", int64(MaxUnits), u)
	}
	if u < min {
		if min == 1 {
			return 0, p.Fail(v, field, "must be > 0, got %d", u)
		}
		return 0, p.Fail(v, field, "must be >= %d, got %d", min, u)
	}
	return u, nil
}

// Identifier refuses a pool or operation name that is not a plain
// identifier: the limiters and the ledger keep names inside keys and
// records whose separators are punctuation and control characters, so a
// name holding one could alias another pool's state.
func (p Checker) Identifier(k *yaml.Node, field, name string) error {
	if k.Kind != yaml.ScalarNode || name == "" {
		return p.Fail(k, field, "a name must be a plain identifier (letters, digits, _, ., -)")
	}
	for _, r := range name {
		if !isIdentRune(r) {
			return p.Fail(k, field, "%q is not a plain identifier (letters, digits, _, ., -): %q is not allowed", name, r)
		}
	}
	return nil
}

func isIdentRune(r rune) bool {
	return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '.' || r == '-'
}

func (p Checker) pools(n *yaml.Node, c *ingest.Costs) error {
	err := p.Mapping(n, "pools", func(name string, k, v *yaml.Node) error {
		if err := p.Identifier(k, "pools", name); err != nil {
			return err
		}
		pool, err := p.pool(name, v)
		c.Pools = append(c.Pools, pool)
		return err
	})
	if err == nil && len(c.Pools) == 0 {
		return p.Fail(n, "pools", "at least one pool is needed")
	}
	return err
}

func (p Checker) pool(name string, n *yaml.Node) (ingest.Pool, error) {
	pool := ingest.Pool{Name: name}
	field := "pools." + name
	var limitNode, reserveNode, failNode *yaml.Node
	err := p.Mapping(n, field, func(key string, k, v *yaml.Node) error {
		var err error
		switch key {
		case "limit":
			limitNode = v
			pool.Limit, err = p.Integer(v, Join(field, key), 1)
		case "reserve":
			reserveNode = v
			pool.Reserve, err = p.Integer(v, Join(field, key), 0)
		case "window":
			pool.Window, err = p.Window(v, Join(field, key))
		case "day":
			pool.Day, err = p.zone(v, Join(field, key))
		case "fail_open":
			failNode = v
			pool.FailOpen, err = p.failOpen(v, Join(field, key))
		default:
			err = p.Fail(k, Join(field, key), "unknown key (want limit, reserve, window, day, fail_open)")
		}
		return err
	})
	switch {
	case err != nil:
		return pool, err
	case limitNode == nil:
		return pool, p.Fail(n, field+".limit", "missing")
	case pool.Window == 0:
		return pool, p.Fail(n, field+".window", "missing")
	case pool.Reserve >= pool.Limit:
		return pool, p.Fail(reserveNode, field+".reserve", "must be below limit %d, got %d", pool.Limit, pool.Reserve)
	case failNode != nil && pool.FailOpen.MaxCost > pool.Capacity():
		return pool, p.Fail(failNode, field+".fail_open.max_cost", "must fit the pool (limit %d - reserve %d = %d), got %d",
			pool.Limit, pool.Reserve, pool.Capacity(), pool.FailOpen.MaxCost)
	}
	return pool, nil
}

// zone loads an IANA zone name; time/tzdata is linked in (reset.go), so it
// loads on images without a zone database.
func (p Checker) zone(v *yaml.Node, field string) (*time.Location, error) {
	if v.Kind != yaml.ScalarNode || v.Value == "" || v.Value == "Local" {
		return nil, p.Fail(v, field, "must be an IANA time zone like America/Los_Angeles, got %q", v.Value)
	}
	loc, err := time.LoadLocation(v.Value)
	if err != nil {
		return nil, p.Fail(v, field, "unknown time zone %q (want an IANA name like America/Los_Angeles)", v.Value)
	}
	return loc, nil
}

func (p Checker) failOpen(n *yaml.Node, field string) (ingest.FailOpen, error) {
	var f ingest.FailOpen
	err := p.Mapping(n, field, func(key string, k, v *yaml.Node) error {
		var err error
		switch key {
		case "max_cost":
			f.MaxCost, err = p.Integer(v, Join(field, key), 1)
		case "budget":
			f.Budget, err = p.Integer(v, Join(field, key), 1)
		default:
			err = p.Fail(k, Join(field, key), "unknown key (want max_cost, budget)")
		}
		return err
	})
	switch {
	case err != nil:
		return f, err
	case f.MaxCost == 0:
		return f, p.Fail(n, field+".max_cost", "missing")
	case f.Budget == 0:
		return f, p.Fail(n, field+".budget", "missing")
	case f.Budget < f.MaxCost:
		return f, p.Fail(n, field+".budget", "must be at least max_cost %d, got %d", f.MaxCost, f.Budget)
	}
	return f, nil
}

// Window parses a duration of at least 1ms and at most MaxWindow.
func (p Checker) Window(v *yaml.Node, field string) (time.Duration, error) {
	d, err := time.ParseDuration(v.Value)
	if err != nil || v.Kind != yaml.ScalarNode {
		return 0, p.Fail(v, field, "must be a duration like 24h or 90s, got %q", v.Value)
	}
	if d < time.Millisecond {
		return 0, p.Fail(v, field, "must be at least 1ms, got %s", d)
	}
	if d > MaxWindow {
		return 0, p.Fail(v, field, "at most 31 days (744h), got %s", d)
	}
	return d, nil
}

func (p Checker) operations(n *yaml.Node, c *ingest.Costs) error {
	err := p.Mapping(n, "operations", func(op string, k, v *yaml.Node) error {
		if err := p.Identifier(k, "operations", op); err != nil {
			return err
		}
		field := "operations." + op
		var charges []ingest.Charge
		err := p.Mapping(v, field, func(pool string, pk, pv *yaml.Node) error {
			pl, ok := c.Pool(pool)
			if !ok {
				return p.Fail(pk, Join(field, pool), "unknown pool %q (pools are %s)", pool, poolNames(c))
			}
			u, err := p.Integer(pv, Join(field, pool), 1)
			if err == nil && u > pl.Capacity() {
				err = p.Fail(pv, Join(field, pool), "%d units can never fit pool %s (limit %d - reserve %d = %d)",
					u, pool, pl.Limit, pl.Reserve, pl.Capacity())
			}
			charges = append(charges, ingest.Charge{Pool: pool, Units: u})
			return err
		})
		if err == nil && len(charges) == 0 {
			err = p.Fail(v, field, "must charge at least one pool")
		}
		sort.Slice(charges, func(i, j int) bool { return charges[i].Pool < charges[j].Pool })
		c.Operations[op] = charges
		return err
	})
	if err == nil && len(c.Operations) == 0 {
		return p.Fail(n, "operations", "at least one operation is needed")
	}
	return err
}

func poolNames(c *ingest.Costs) string {
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

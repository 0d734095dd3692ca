package ratelimit

import (
	"cmp"
	_ "embed"
	"maps"
	"slices"
	"sort"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/ingestworks/ingest/costs"
)

//go:embed apiplans.yaml
var defaultAPIPlans []byte

// AnonymousPlan is the plan of API callers without a token, each metered
// by its address.
const AnonymousPlan = "anonymous"

// APIPlan is what one client of the read API may spend: at most Limit
// units over any trailing Window, of which Burst at once after a pause.
// The rest comes back evenly, one unit every Interval: a client could
// otherwise spend a full burst, then a whole window's refill, in one
// window (docs/api.md).
type APIPlan struct {
	Name   string
	Limit  int64
	Window time.Duration
	Burst  int64
}

// ProxyPlan is what a client of ingest proxy on a plan may spend of the
// upstream's quota: at most Daily units of each pool it names per day of
// the pool (a pool not named: whatever the daemon's plan leaves to
// clients), and only calls costing at most MaxCost units, all pools
// together, but for the operations Grants names. Priority orders the
// plans when what is left to clients runs low: 0 first, then 1, and so
// on; a plan spends a pool only down to the daily shares of the plans
// before it (FloorOf).
type ProxyPlan struct {
	Daily    map[string]int64
	MaxCost  int64
	Grants   []string
	Priority int64
	// lines are where each of Daily's pools and Grants' operations is, for
	// CheckProxy's errors.
	lines map[string]int
}

// DefaultMaxCost is what one call may cost a proxy's client whose plan
// sets no max_cost: the price of a read of one page.
const DefaultMaxCost = 1

// maxRefill bounds how long a plan's full burst takes to come back, so
// that the limiter's times stay exact in a double (Redis's Lua numbers).
const maxRefill = 366 * 24 * time.Hour

// Interval is how long one unit takes to come back: the window over
// limit-burst+1, rounded up to the microsecond. A burst of B and the
// units that come back within one window then make at most Limit.
func (p APIPlan) Interval() time.Duration {
	n := p.Limit - p.Burst + 1
	us := (p.Window.Microseconds() + n - 1) / n
	return time.Duration(max(us, 1)) * time.Microsecond
}

// APIPlans is a parsed plans file: the plans and what a request of each
// route costs.
type APIPlans struct {
	File   string
	Plans  []APIPlan        // sorted by name
	Routes map[string]int64 // units of a request, by route; unlisted: 1
	// Proxy is what a token on each plan may spend of the upstream's
	// quota through ingest proxy, by plan (ProxyOf).
	Proxy map[string]ProxyPlan
	lines map[string]int // the line of each route, for CheckRoutes
}

// DefaultAPIPlans returns the plans file built into the binary.
func DefaultAPIPlans() *APIPlans {
	p, err := ParseAPIPlans("apiplans.yaml (built in)", defaultAPIPlans)
	if err != nil {
		panic(err)
	}
	return p
}

// Plan returns the plan called name.
func (a *APIPlans) Plan(name string) (APIPlan, bool) {
	for _, p := range a.Plans {
		if p.Name == name {
			return p, true
		}
	}
	return APIPlan{}, false
}

// Usable says whether serve meters a token on plan: only when the file
// has it, and it is not AnonymousPlan, which no token may hold.
func (a *APIPlans) Usable(plan string) bool {
	_, ok := a.Plan(plan)
	return ok && plan != AnonymousPlan
}

// Cost is the units of one request of route.
func (a *APIPlans) Cost(route string) int64 {
	if u, ok := a.Routes[route]; ok {
		return u
	}
	return 1
}

// CheckRoutes names, with its line, the first route of the file that is
// not one of known: a typo would otherwise price nothing.
func (a *APIPlans) CheckRoutes(known []string) error {
	for _, r := range slices.Sorted(maps.Keys(a.Routes)) {
		if !slices.Contains(known, r) {
			return &costs.Error{File: a.File, Line: a.lines[r], Field: "routes." + r,
				Msg: "unknown route (routes are " + strings.Join(known, ", ") + ")"}
		}
	}
	return nil
}

// ParseAPIPlans reads a plans file strictly, as costs.Parse does a costs
// file: unknown keys, names that are not plain identifiers, limits or
// costs that are not positive or above MaxUnits, windows that do not parse,
// a burst above its limit and a route cost above some plan's burst are
// errors naming file, line and field. A plan without a burst gets a tenth
// of its limit, or the dearest route's cost when that is more.
func ParseAPIPlans(file string, data []byte) (*APIPlans, error) {
	p := plansParser{costs.Checker{File: file}}
	top, err := p.Document(data)
	if err != nil {
		return nil, err
	}
	a := &APIPlans{File: file, Routes: map[string]int64{}, Proxy: map[string]ProxyPlan{}, lines: map[string]int{}}
	var plansNode, routesNode *yaml.Node
	err = p.Mapping(top, "", func(key string, k, v *yaml.Node) error {
		switch key {
		case "plans":
			plansNode = v
		case "routes":
			routesNode = v
		default:
			return p.Fail(k, key, "unknown key (want plans, routes)")
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if plansNode == nil {
		return nil, p.Fail(top, "plans", "missing")
	}
	if err := p.apiPlans(plansNode, a); err != nil {
		return nil, err
	}
	if routesNode != nil {
		if err := p.apiRoutes(routesNode, a); err != nil {
			return nil, err
		}
	}
	return a, p.apiBursts(plansNode, a)
}

// plansParser reads a plans file as a costs file is read.
type plansParser struct{ costs.Checker }

func (p plansParser) apiPlans(n *yaml.Node, a *APIPlans) error {
	err := p.Mapping(n, "plans", func(name string, k, v *yaml.Node) error {
		if err := p.Identifier(k, "plans", name); err != nil {
			return err
		}
		plan, proxy, err := p.apiPlan(name, v)
		a.Plans, a.Proxy[name] = append(a.Plans, plan), proxy
		return err
	})
	if err == nil && len(a.Plans) == 0 {
		return p.Fail(n, "plans", "at least one plan is needed")
	}
	sort.Slice(a.Plans, func(i, j int) bool { return a.Plans[i].Name < a.Plans[j].Name })
	return err
}

func (p plansParser) apiPlan(name string, n *yaml.Node) (APIPlan, ProxyPlan, error) {
	plan, field := APIPlan{Name: name}, "plans."+name
	proxy := ProxyPlan{MaxCost: DefaultMaxCost}
	err := p.Mapping(n, field, func(key string, k, v *yaml.Node) error {
		var err error
		switch key {
		case "limit":
			plan.Limit, err = p.Integer(v, costs.Join(field, key), 1)
		case "window":
			plan.Window, err = p.Window(v, costs.Join(field, key))
		case "burst":
			plan.Burst, err = p.Integer(v, costs.Join(field, key), 1)
		case "proxy":
			proxy, err = p.proxyPlan(v, costs.Join(field, key))
		default:
			err = p.Fail(k, costs.Join(field, key), "unknown key (want limit, window, burst, proxy)")
		}
		return err
	})
	switch {
	case err != nil:
		return plan, proxy, err
	case plan.Limit == 0:
		return plan, proxy, p.Fail(n, field+".limit", "missing")
	case plan.Window == 0:
		return plan, proxy, p.Fail(n, field+".window", "missing")
	case plan.Window < time.Second:
		return plan, proxy, p.Fail(n, field+".window", "must be at least 1s (clients are told it in whole seconds), got %s", plan.Window)
	case plan.Burst > plan.Limit:
		return plan, proxy, p.Fail(n, field+".burst", "must be at most the limit (%d), got %d", plan.Limit, plan.Burst)
	}
	return plan, proxy, nil
}

// proxyPlan reads a plan's proxy: section.
func (p plansParser) proxyPlan(n *yaml.Node, field string) (ProxyPlan, error) {
	pp := ProxyPlan{Daily: map[string]int64{}, MaxCost: DefaultMaxCost, lines: map[string]int{}}
	err := p.Mapping(n, field, func(key string, k, v *yaml.Node) error {
		switch key {
		case "daily":
			return p.Mapping(v, costs.Join(field, key), func(pool string, pk, pv *yaml.Node) error {
				u, err := p.Integer(pv, costs.Join(field, "daily."+pool), 0)
				pp.Daily[pool], pp.lines["daily."+pool] = u, pk.Line
				return err
			})
		case "max_cost":
			var err error
			pp.MaxCost, err = p.Integer(v, costs.Join(field, key), 1)
			return err
		case "grants":
			if v.Kind != yaml.SequenceNode {
				return p.Fail(v, costs.Join(field, key), "want a list of operations, as costs.yaml names them")
			}
			for _, op := range v.Content {
				pp.Grants = append(pp.Grants, op.Value)
				pp.lines["grants."+op.Value] = op.Line
			}
			return nil
		case "priority":
			var err error
			pp.Priority, err = p.Integer(v, costs.Join(field, key), 0)
			return err
		}
		return p.Fail(k, costs.Join(field, key), "unknown key (want daily, max_cost, grants, priority)")
	})
	return pp, err
}

// CheckProxy names, with its line, the first pool a plan's proxy: daily
// names that pools does not have, or operation its grants name that ops
// does not: a typo would otherwise share nothing or grant nothing.
func (a *APIPlans) CheckProxy(pools, ops []string) error {
	for _, name := range slices.Sorted(maps.Keys(a.Proxy)) {
		pp, field := a.Proxy[name], "plans."+name+".proxy."
		for _, pool := range slices.Sorted(maps.Keys(pp.Daily)) {
			if !slices.Contains(pools, pool) {
				return &costs.Error{File: a.File, Line: pp.lines["daily."+pool], Field: field + "daily." + pool,
					Msg: "no such pool in costs.yaml (pools are " + strings.Join(pools, ", ") + ")"}
			}
		}
		for _, op := range pp.Grants {
			if !slices.Contains(ops, op) {
				return &costs.Error{File: a.File, Line: pp.lines["grants."+op], Field: field + "grants",
					Msg: op + " is no operation costs.yaml prices (operations are " + strings.Join(ops, ", ") + ")"}
			}
		}
	}
	return nil
}

// ProxyOf is what a token on plan may spend through ingest proxy: the
// plan's proxy: section, or none but DefaultMaxCost for a plan the file
// does not have.
func (a *APIPlans) ProxyOf(plan string) ProxyPlan {
	if pp, ok := a.Proxy[plan]; ok {
		return pp
	}
	return ProxyPlan{MaxCost: DefaultMaxCost}
}

// FloorOf is what a client on plan leaves of pool to the clients before
// it: the sum of the daily shares of pool of every plan of a smaller
// priority number, each counted once however many tokens hold it. A
// plan before it with no share of pool keeps nothing there: a share is
// what makes a priority a room kept.
func (a *APIPlans) FloorOf(plan, pool string) int64 {
	mine := a.ProxyOf(plan).Priority
	var floor int64
	for _, pp := range a.Proxy {
		if pp.Priority < mine {
			floor += pp.Daily[pool]
		}
	}
	return floor
}

// Floors is, by each priority after the first that a plan's proxy:
// section names, the floor its clients spend a pool down to (FloorOf), by
// pool; nil when no plan is of a later priority.
func (a *APIPlans) Floors() map[int64]map[string]int64 {
	var out map[int64]map[string]int64
	for name, pp := range a.Proxy {
		if pp.Priority == 0 || out[pp.Priority] != nil {
			continue
		}
		if out == nil {
			out = map[int64]map[string]int64{}
		}
		floors := map[string]int64{}
		for _, other := range a.Proxy {
			for pool := range other.Daily {
				floors[pool] = a.FloorOf(name, pool)
			}
		}
		out[pp.Priority] = floors
	}
	return out
}

// Allows says whether a call of op costing units, all pools together,
// is within the plan: no dearer than MaxCost, or granted.
func (pp ProxyPlan) Allows(op string, units int64) bool {
	return units <= cmp.Or(pp.MaxCost, DefaultMaxCost) || slices.Contains(pp.Grants, op)
}

func (p plansParser) apiRoutes(n *yaml.Node, a *APIPlans) error {
	return p.Mapping(n, "routes", func(route string, k, v *yaml.Node) error {
		if err := p.Identifier(k, "routes", route); err != nil {
			return err
		}
		field := "routes." + route
		u, err := p.Integer(v, field, 1)
		if err != nil {
			return err
		}
		for _, plan := range a.Plans {
			if u > plan.Limit {
				return p.Fail(v, field, "%d units can never fit plan %s (limit %d)", u, plan.Name, plan.Limit)
			}
		}
		a.Routes[route], a.lines[route] = u, k.Line
		return nil
	})
}

// apiBursts gives each plan without a burst its default, then checks that
// every route fits every burst (a dearer request could never be admitted)
// and that a burst comes back within maxRefill.
func (p plansParser) apiBursts(plansNode *yaml.Node, a *APIPlans) error {
	dearest := int64(1)
	for _, u := range a.Routes {
		dearest = max(dearest, u)
	}
	for i := range a.Plans {
		plan := &a.Plans[i]
		field, n := "plans."+plan.Name+".burst", p.planNode(plansNode, plan.Name)
		if plan.Burst == 0 {
			plan.Burst = min(plan.Limit, max((plan.Limit+9)/10, dearest))
		}
		if plan.Burst < dearest {
			return p.Fail(n, field, "%d is below the dearest route's cost (%d): that route could never be admitted", plan.Burst, dearest)
		}
		if float64(plan.Burst)*float64(plan.Interval()) > float64(maxRefill) {
			return p.Fail(n, field, "a burst of %d takes more than a year to come back (one unit every %s): lower it or raise the limit", plan.Burst, plan.Interval())
		}
	}
	return nil
}

// planNode is the value node of plan name, for an error's line.
func (p plansParser) planNode(plansNode *yaml.Node, name string) *yaml.Node {
	for i := 0; i+1 < len(plansNode.Content); i += 2 {
		if plansNode.Content[i].Value == name {
			return plansNode.Content[i+1]
		}
	}
	return plansNode
}

package ratelimit

import (
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
	lines  map[string]int   // the line of each route, for CheckRoutes
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
	a := &APIPlans{File: file, Routes: map[string]int64{}, lines: map[string]int{}}
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
		plan, err := p.apiPlan(name, v)
		a.Plans = append(a.Plans, plan)
		return err
	})
	if err == nil && len(a.Plans) == 0 {
		return p.Fail(n, "plans", "at least one plan is needed")
	}
	sort.Slice(a.Plans, func(i, j int) bool { return a.Plans[i].Name < a.Plans[j].Name })
	return err
}

func (p plansParser) apiPlan(name string, n *yaml.Node) (APIPlan, error) {
	plan, field := APIPlan{Name: name}, "plans."+name
	err := p.Mapping(n, field, func(key string, k, v *yaml.Node) error {
		var err error
		switch key {
		case "limit":
			plan.Limit, err = p.Integer(v, costs.Join(field, key), 1)
		case "window":
			plan.Window, err = p.Window(v, costs.Join(field, key))
		case "burst":
			plan.Burst, err = p.Integer(v, costs.Join(field, key), 1)
		default:
			err = p.Fail(k, costs.Join(field, key), "unknown key (want limit, window, burst)")
		}
		return err
	})
	switch {
	case err != nil:
		return plan, err
	case plan.Limit == 0:
		return plan, p.Fail(n, field+".limit", "missing")
	case plan.Window == 0:
		return plan, p.Fail(n, field+".window", "missing")
	case plan.Window < time.Second:
		return plan, p.Fail(n, field+".window", "must be at least 1s (clients are told it in whole seconds), got %s", plan.Window)
	case plan.Burst > plan.Limit:
		return plan, p.Fail(n, field+".burst", "must be at most the limit (%d), got %d", plan.Limit, plan.Burst)
	}
	return plan, nil
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

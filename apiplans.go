package ingest

import (
	_ "embed"
	"maps"
	"slices"
	"sort"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
)

//go:embed apiplans.yaml
var defaultAPIPlans []byte

// AnonymousPlan is the plan of API callers without a token, each metered
// by its address.
const AnonymousPlan = "anonymous"

// APIPlan is what one client of the read API may spend: Limit units over a
// trailing Window.
type APIPlan struct {
	Name   string
	Limit  int64
	Window time.Duration
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
			return &CostsError{File: a.File, Line: a.lines[r], Field: "routes." + r,
				Msg: "unknown route (routes are " + strings.Join(known, ", ") + ")"}
		}
	}
	return nil
}

// Costs is the plan as the limiter takes it: one pool named after the plan,
// without reserve or calendar day, and one operation, "api", of one unit.
func (p APIPlan) Costs() *Costs {
	return &Costs{
		Pools:      []Pool{{Name: p.Name, Limit: p.Limit, Window: p.Window}},
		Operations: map[string][]Charge{"api": {{Pool: p.Name, Units: 1}}},
	}
}

// ParseAPIPlans reads a plans file strictly, as ParseCosts does a costs
// file: unknown keys, names that are not plain identifiers, limits or
// costs that are not positive or above MaxUnits, windows that do not parse
// and a route cost above some plan's limit are errors naming file, line
// and field.
func ParseAPIPlans(file string, data []byte) (*APIPlans, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, &CostsError{File: file, Line: yamlLine(err), Msg: err.Error()}
	}
	p := costsParser{file: file}
	if len(doc.Content) == 0 {
		return nil, p.fail(&doc, "", "empty file")
	}
	a := &APIPlans{File: file, Routes: map[string]int64{}, lines: map[string]int{}}
	var plansNode, routesNode *yaml.Node
	top := doc.Content[0]
	err := p.mapping(top, "", func(key string, k, v *yaml.Node) error {
		switch key {
		case "plans":
			plansNode = v
		case "routes":
			routesNode = v
		default:
			return p.fail(k, key, "unknown key (want plans, routes)")
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if plansNode == nil {
		return nil, p.fail(top, "plans", "missing")
	}
	if err := p.apiPlans(plansNode, a); err != nil {
		return nil, err
	}
	if routesNode != nil {
		err = p.apiRoutes(routesNode, a)
	}
	return a, err
}

func (p costsParser) apiPlans(n *yaml.Node, a *APIPlans) error {
	err := p.mapping(n, "plans", func(name string, k, v *yaml.Node) error {
		if err := p.identifier(k, "plans", name); err != nil {
			return err
		}
		plan, err := p.apiPlan(name, v)
		a.Plans = append(a.Plans, plan)
		return err
	})
	if err == nil && len(a.Plans) == 0 {
		return p.fail(n, "plans", "at least one plan is needed")
	}
	sort.Slice(a.Plans, func(i, j int) bool { return a.Plans[i].Name < a.Plans[j].Name })
	return err
}

func (p costsParser) apiPlan(name string, n *yaml.Node) (APIPlan, error) {
	plan, field := APIPlan{Name: name}, "plans."+name
	err := p.mapping(n, field, func(key string, k, v *yaml.Node) error {
		var err error
		switch key {
		case "limit":
			plan.Limit, err = p.integer(v, join(field, key), 1)
		case "window":
			plan.Window, err = p.window(v, join(field, key))
		default:
			err = p.fail(k, join(field, key), "unknown key (want limit, window)")
		}
		return err
	})
	switch {
	case err != nil:
		return plan, err
	case plan.Limit == 0:
		return plan, p.fail(n, field+".limit", "missing")
	case plan.Window == 0:
		return plan, p.fail(n, field+".window", "missing")
	case plan.Window < time.Second:
		return plan, p.fail(n, field+".window", "must be at least 1s (clients are told it in whole seconds), got %s", plan.Window)
	}
	return plan, nil
}

func (p costsParser) apiRoutes(n *yaml.Node, a *APIPlans) error {
	return p.mapping(n, "routes", func(route string, k, v *yaml.Node) error {
		if err := p.identifier(k, "routes", route); err != nil {
			return err
		}
		field := "routes." + route
		u, err := p.integer(v, field, 1)
		if err != nil {
			return err
		}
		for _, plan := range a.Plans {
			if u > plan.Limit {
				return p.fail(v, field, "%d units can never fit plan %s (limit %d)", u, plan.Name, plan.Limit)
			}
		}
		a.Routes[route], a.lines[route] = u, k.Line
		return nil
	})
}

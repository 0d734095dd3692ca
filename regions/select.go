package regions

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/ingestworks/ingest"
)

// Chart is a selected region as the schedule and the plan see it: which
// region, how often relative to the others (Tier), and how much of its
// chart a pass reads (Depth).
type Chart struct {
	Code string
	// Tier is 1 for the most frequent; a tier-N region's own chart runs at
	// most every N x --every, and when a pool is short it is stretched to N
	// times tier 1's cadence. Scarcity drops the highest tier first.
	Tier int
	// Depth is how many of the chart's videos a pass reads, top first: a
	// multiple of PageSize up to MaxDepth.
	Depth int
}

const (
	// PageSize is the videos one chart page holds (maxResults=50), one
	// call of videos.list.
	PageSize = 50
	// MaxDepth is a whole chart: the upstream serves at most 200 videos.
	MaxDepth = 200
	// MaxTier is the highest tier: a tier-24 chart of an hourly schedule
	// runs once a day.
	MaxTier = 24
)

// Pages is how many pages a pass of the chart reads at most.
func (c Chart) Pages() int { return (c.Depth + PageSize - 1) / PageSize }

// Default are the regions whose charts ingest keeps when --regions is not
// given, in schedule order: region i runs at offset i x every/n.
var Default = []string{"US", "GB", "DE", "FR", "IN", "BR", "AU", "CA"}

// DefaultText is Default as help texts print it: "US, GB, ...".
func DefaultText() string { return strings.Join(Default, ", ") }

// Syntax is the --regions syntax, as help and errors teach it.
const Syntax = `ITEM[,ITEM...], where ITEM is a region code (US), "all" (every region of the catalogue) or "default" (` +
	`the default regions), each optionally followed by ":tier=N" (1-24: runs at most every N x --every) and ":depth=N" ` +
	`(50, 100, 150 or 200: how much of the chart a pass reads); a code's own settings win over those of "all" or "default"`

// Parse reads a --regions value against the catalogue: charts in the order
// first named, every region once. "" is the default regions, each at tier
// 1 and the whole chart. The error names the item at fault.
func Parse(text string, cat Catalogue) ([]Chart, error) {
	if strings.TrimSpace(text) == "" {
		text = "default"
	}
	var out []Chart
	index := map[string]int{}
	explicit := map[string]bool{}
	for _, item := range strings.Split(text, ",") {
		name, set, err := parseItem(item)
		if err != nil {
			return nil, err
		}
		codes, group := expand(name, cat)
		if codes == nil {
			return nil, notACode(item, name, cat)
		}
		for _, code := range codes {
			i, seen := index[code]
			if !seen {
				i, index[code] = len(out), len(out)
				out = append(out, Charts(code)...)
			}
			if group && explicit[code] {
				continue
			}
			if !group && explicit[code] && set != (settings{}) {
				return nil, fmt.Errorf("%q: %s is given settings twice", strings.TrimSpace(item), code)
			}
			set.apply(&out[i])
			if !group && set != (settings{}) {
				explicit[code] = true
			}
		}
	}
	return out, nil
}

// notACode is the error of an item whose name is no region: with the code
// most likely meant, when one is.
func notACode(item, name string, cat Catalogue) error {
	err := fmt.Errorf("%q is not a region code (like US, GB, DE), \"all\" or \"default\"", strings.TrimSpace(item))
	if code := Suggest(name, cat); code != "" {
		return fmt.Errorf("%w; did you mean %s?", err, code)
	}
	return err
}

type settings struct{ tier, depth int }

func (s settings) apply(c *Chart) {
	if s.tier > 0 {
		c.Tier = s.tier
	}
	if s.depth > 0 {
		c.Depth = s.depth
	}
}

func parseItem(item string) (string, settings, error) {
	parts := strings.Split(strings.TrimSpace(item), ":")
	var s settings
	for _, p := range parts[1:] {
		key, value, ok := strings.Cut(p, "=")
		n, err := strconv.Atoi(value)
		switch {
		case !ok || err != nil:
			return "", s, fmt.Errorf("%q: %q is not tier=N or depth=N", strings.TrimSpace(item), p)
		case key == "tier" && n >= 1 && n <= MaxTier:
			s.tier = n
		case key == "tier":
			return "", s, fmt.Errorf("%q: tier must be 1-%d, got %d", strings.TrimSpace(item), MaxTier, n)
		case key == "depth" && n >= PageSize && n <= MaxDepth && n%PageSize == 0:
			s.depth = n
		case key == "depth":
			return "", s, fmt.Errorf("%q: depth must be 50, 100, 150 or 200 (the chart's pages of 50), got %d", strings.TrimSpace(item), n)
		default:
			return "", s, fmt.Errorf("%q: unknown setting %q (tier or depth)", strings.TrimSpace(item), key)
		}
	}
	return parts[0], s, nil
}

// expand is the codes an item's name selects, and whether it names a group
// rather than one region; nil when it names nothing.
func expand(name string, cat Catalogue) ([]string, bool) {
	switch strings.ToLower(name) {
	case "all":
		return cat.Codes(), true
	case "default":
		return Default, true
	}
	code := strings.ToUpper(name)
	if !Valid(code) {
		return nil, false
	}
	return []string{code}, false
}

// Charts are codes' charts at tier 1, each read whole: a selection without
// settings, and what each region of one is before its settings apply.
func Charts(codes ...string) []Chart {
	out := make([]Chart, len(codes))
	for i, code := range codes {
		out[i] = Chart{Code: code, Tier: 1, Depth: MaxDepth}
	}
	return out
}

// Codes are the charts' region codes, in their order.
func Codes(charts []Chart) []string {
	out := make([]string, len(charts))
	for i, c := range charts {
		out[i] = c.Code
	}
	return out
}

// Selection is --regions as given, read against a catalogue (Of) once the
// process has the one it runs by: a selection of all is the regions of
// the catalogue the database keeps, which only an open database knows.
type Selection string

// All reports whether s names all, the regions of the catalogue.
func (s Selection) All() bool {
	for _, item := range strings.Split(string(s), ",") {
		name, _, _ := strings.Cut(item, ":")
		if strings.EqualFold(strings.TrimSpace(name), "all") {
			return true
		}
	}
	return false
}

// Of is the charts s selects from cat, each with its tier and depth; a
// selection cat refuses is a configuration error (ingest.ConfigError)
// naming --regions, whichever command reads it.
func (s Selection) Of(cat Catalogue) ([]Chart, error) {
	charts, err := Parse(string(s), cat)
	if err != nil {
		return nil, ingest.ConfigErrorf("--regions: %w", err)
	}
	return charts, nil
}

package report

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"sort"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/costs"
	"github.com/ingestworks/ingest/pace"
)

// ClientUnits is what one of the proxy's clients took over the last day.
type ClientUnits struct {
	Client string
	Calls  int
	Units  map[string]int64
}

// byClient is what each of the proxy's clients took of calls, by name.
func byClient(calls []ingest.Call) []ClientUnits {
	seen := map[string]*ClientUnits{}
	for _, c := range calls {
		if c.Client == "" {
			continue
		}
		g := seen[c.Client]
		if g == nil {
			g = &ClientUnits{Client: c.Client, Units: map[string]int64{}}
			seen[c.Client] = g
		}
		g.Calls++
		for _, ch := range c.Charges {
			g.Units[ch.Pool] += ch.Units
		}
	}
	var out []ClientUnits
	for _, g := range seen {
		out = append(out, *g)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Client < out[j].Client })
	return out
}

// leftToClients is, by pool, what the proxy's clients may still take: what
// the limiter has left less what the daemon's published plan keeps for its
// tier-1 charts (pace.Status.LeftBeside); the pools whole when no daemon paces.
func (r *Report) leftToClients(ctx context.Context, src Sources) error {
	doc, _, ok, err := src.DB.Plan(ctx, src.QuotaKey)
	if err != nil {
		return fmt.Errorf("read the daemon's plan: %w", err)
	}
	var st pace.Status
	paced := ok && json.Unmarshal(doc, &st) == nil && !st.Stale(r.Now)
	r.LeftToClients = map[string]int64{}
	for _, p := range r.Pools {
		left := p.Remaining
		if paced {
			left = st.LeftBeside(p.PoolState, r.Now).Units
		}
		r.LeftToClients[p.Pool] = max(left, 0)
	}
	for pri, floors := range src.Floors {
		if r.LeftByPriority == nil {
			r.LeftByPriority = map[int64]map[string]int64{}
		}
		r.LeftByPriority[pri] = map[string]int64{}
		for pool, left := range r.LeftToClients {
			r.LeftByPriority[pri][pool] = max(left-floors[pool], 0)
		}
	}
	return nil
}

// textClients prints each client's spend and what is left to clients,
// when the proxy's clients spent within the day.
func (r *Report) textClients(out io.Writer) {
	if len(r.ByClient) == 0 {
		return
	}
	w := tw(out)
	fmt.Fprintln(w, "CLIENT (ingest proxy)\tCALLS\tUNITS (by pool)")
	for _, g := range r.ByClient {
		fmt.Fprintf(w, "%s\t%d\t%s\n", g.Client, g.Calls, costs.PoolUnits(g.Units))
	}
	w.Flush()
	fmt.Fprintf(out, "Left to the proxy's clients, after the daemon's tier-1 charts: %s\n", costs.PoolUnits(r.LeftToClients))
	for _, pri := range slices.Sorted(maps.Keys(r.LeftByPriority)) {
		fmt.Fprintf(out, "  to priority %d, after the earlier priorities' daily shares: %s\n", pri, costs.PoolUnits(r.LeftByPriority[pri]))
	}
	fmt.Fprintln(out)
}

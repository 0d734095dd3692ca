package ingest

import (
	"os"
	"reflect"
	"strings"
	"testing"
)

// The built-in costs.yaml prices every operation of the registry as the
// upstream charges it, and nothing else: the two are read by different
// parts (the limiter, the fake upstream) and must not drift apart.
func TestBuiltInCostsAreTheRegistrys(t *testing.T) {
	c := DefaultCosts()
	for _, op := range Operations {
		got, err := c.Op(op.Name)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, op.Cost) {
			t.Errorf("costs.yaml prices %s %v; the registry says the upstream charges %v", op.Name, got, op.Cost)
		}
	}
	if len(c.Operations) != len(Operations) {
		t.Errorf("costs.yaml prices %d operations, the registry has %d", len(c.Operations), len(Operations))
	}
}

func TestOperationsAreWellFormed(t *testing.T) {
	seen := map[string]bool{}
	for _, op := range Operations {
		if seen[op.Name] || seen[op.Path] || op.Path == "" || strings.HasPrefix(op.Path, "/") {
			t.Errorf("%s: duplicate name or path, or a path that is empty or absolute (%q)", op.Name, op.Path)
		}
		seen[op.Name], seen[op.Path] = true, true
		if len(op.Cost) == 0 {
			t.Errorf("%s: no cost", op.Name)
		}
	}
}

func TestPerFetch(t *testing.T) {
	c := DefaultCosts()
	for _, tc := range []struct {
		fetch Fetch
		want  map[string]int64
	}{
		{FetchChartPage, map[string]int64{DefaultPool: 1}},
		{FetchSearchPage, map[string]int64{DefaultPool: 1, "search": 1}},
		{FetchStats, map[string]int64{"stats": 1}},
		{FetchCategories, map[string]int64{DefaultPool: 1}},
	} {
		got, err := c.PerFetch(tc.fetch)
		if err != nil || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("PerFetch(%s) = %v, %v; want %v", tc.fetch, got, err, tc.want)
		}
	}
	partial, err := ParseCosts("mine.yaml", []byte("pools: {default: {limit: 10, window: 1h}}\noperations: {videos.list: {default: 1}}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := partial.PerFetch(FetchSearchPage); err == nil || !strings.Contains(err.Error(), OpSearchList) {
		t.Errorf("PerFetch of an unpriced operation: got %v, want an error naming %s", err, OpSearchList)
	}
}

// The contract's copy of costs.yaml (docs/contract.md) is the built-in
// file's pools and operations, so that a new operation or price cannot
// leave the documented contract behind.
func TestContractQuotesTheBuiltInCosts(t *testing.T) {
	doc, err := os.ReadFile("docs/contract.md")
	if err != nil {
		t.Fatal(err)
	}
	_, block, ok := strings.Cut(string(doc), "## costs.yaml\n\n```yaml\n")
	block, _, closed := strings.Cut(block, "```")
	if !ok || !closed {
		t.Fatal("docs/contract.md: no yaml block under ## costs.yaml")
	}
	quoted, err := LoadCosts("docs/contract.md", []byte(block))
	if err != nil {
		t.Fatal(err)
	}
	built := DefaultCosts()
	if !reflect.DeepEqual(quoted.Operations, built.Operations) {
		t.Errorf("docs/contract.md prices %v; costs.yaml %v", quoted.Operations, built.Operations)
	}
	if len(quoted.Pools) != len(built.Pools) {
		t.Fatalf("docs/contract.md has %d pools, costs.yaml %d", len(quoted.Pools), len(built.Pools))
	}
	for i, p := range built.Pools {
		q := quoted.Pools[i]
		if q.Name != p.Name || q.Limit != p.Limit || q.Reserve != p.Reserve || q.Window != p.Window ||
			q.DayName() != p.DayName() || q.FailOpen != p.FailOpen {
			t.Errorf("docs/contract.md pool %+v; costs.yaml %+v", q, p)
		}
	}
}

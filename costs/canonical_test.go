package costs

import (
	"reflect"
	"testing"
)

// TestCanonicalReadsBack: the canonical form of a costs file parses back
// into the same costs, and names it by the same hash however the file was
// laid out; other prices are another hash.
func TestCanonicalReadsBack(t *testing.T) {
	shipped := Default()
	back, err := Load("canonical", Canonical(shipped))
	if err != nil {
		t.Fatalf("the canonical form does not parse: %v\n%s", err, Canonical(shipped))
	}
	if !reflect.DeepEqual(back, shipped) {
		t.Errorf("read back: got %+v, want %+v", back, shipped)
	}
	relaid := []byte("operations:\n  videos.batchGetStats: {stats: 1}\n  search.list: {search: 1}\n  i18nRegions.list: {default: 1}\n" +
		"  videoCategories.list: {default: 1}\n  videos.list: {default: 1}\n" +
		"pools:\n  stats: {limit: 10000, reserve: 0, window: 1440m, day: America/Los_Angeles, fail_open: {budget: 200, max_cost: 1}}\n" +
		"  search: {limit: 100, reserve: 5, window: 24h, day: America/Los_Angeles}\n" +
		"  default: {limit: 10000, reserve: 500, window: 24h, day: America/Los_Angeles, fail_open: {max_cost: 1, budget: 200}}\n")
	same, err := Load("relaid", relaid)
	if err != nil {
		t.Fatal(err)
	}
	if Hash(same) != Hash(shipped) {
		t.Errorf("the same costs laid out otherwise: hash %s, want %s", Hash(same), Hash(shipped))
	}
	dearer, err := Load("dearer", []byte(string(relaid)+""))
	if err != nil {
		t.Fatal(err)
	}
	dearer.Pools[0].Limit = 200000
	if Hash(dearer) == Hash(shipped) {
		t.Errorf("a pool of another limit has the shipped costs' hash %s", Hash(shipped))
	}
}

package fakeyt

import (
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// clock is a time the test moves by hand.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time      { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) add(d time.Duration) { c.mu.Lock(); c.t = c.t.Add(d); c.mu.Unlock() }

// chartOf reads region's whole chart with the real client.
func (fx *fixture) chartOf(t *testing.T, region string) (ids []string, views map[string]uint64) {
	t.Helper()
	views = map[string]uint64{}
	call := fx.service(t).Videos.List([]string{"snippet", "statistics"}).Chart("mostPopular").
		RegionCode(region).MaxResults(50)
	for tok := ""; ; {
		res, err := call.PageToken(tok).Do()
		if err != nil {
			t.Fatal(err)
		}
		for _, it := range res.Items {
			ids = append(ids, it.Id)
			views[it.Id] = it.Statistics.ViewCount
		}
		if tok = res.NextPageToken; tok == "" {
			return ids, views
		}
	}
}

func TestStillChartsByDefault(t *testing.T) {
	t.Parallel()
	fx := newFixture(t)
	a, va := fx.chartOf(t, "GB")
	b, vb := fx.chartOf(t, "GB")
	if !slices.Equal(a, b) || len(va) != len(vb) {
		t.Fatalf("two fetches of a still chart differ")
	}
	for id, n := range va {
		if vb[id] != n {
			t.Errorf("%s views %d then %d, want unchanged", id, n, vb[id])
		}
	}
}

func TestChartsMoveWithTheClock(t *testing.T) {
	t.Parallel()
	fx := newFixture(t)
	start := Anchor.Add(30 * 24 * time.Hour)
	c := &clock{t: start}
	fx.fake.Move(7, c.now)
	before, vb := fx.chartOf(t, "GB")
	c.add(time.Hour)
	after, va := fx.chartOf(t, "GB")
	if len(after) != len(before) || len(after) != ChartLengths["GB"] {
		t.Fatalf("chart length %d then %d, want %d", len(before), len(after), ChartLengths["GB"])
	}
	entered, moved, grew := 0, 0, 0
	for i, id := range after {
		j := slices.Index(before, id)
		switch {
		case j < 0:
			entered++
		case j != i:
			moved++
		}
		if j >= 0 && va[id] > vb[id] {
			grew++
		}
		if j >= 0 && va[id] < vb[id] {
			t.Errorf("%s views went down: %d then %d", id, vb[id], va[id])
		}
	}
	if entered == 0 || moved == 0 || grew == 0 {
		t.Errorf("after an hour: %d entered, %d changed rank, %d grew; want each > 0", entered, moved, grew)
	}
	// The same seed and clock give the same chart.
	fx2 := newFixture(t)
	c2 := &clock{t: start}
	fx2.fake.Move(7, c2.now)
	c2.add(time.Hour)
	again, _ := fx2.chartOf(t, "GB")
	if !slices.Equal(again, after) {
		t.Errorf("same seed and clock, different charts")
	}
}

func TestStatsGrowForVideosOffTheChart(t *testing.T) {
	t.Parallel()
	fx := newFixture(t)
	c := &clock{t: Anchor.Add(2 * time.Hour)}
	fx.fake.Move(1, c.now)
	first, _ := fx.chartOf(t, "AU")
	ids := first[:3]
	read := func() map[string]int64 {
		res, err := fx.service(t).Videos.BatchGetStats().Id(ids...).Part("statistics").Do()
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]int64{}
		for _, it := range res.Items {
			out[it.Id] = int64(it.Statistics.ViewCount)
		}
		return out
	}
	a := read()
	c.add(30 * 24 * time.Hour) // long after a fresh video left the chart
	b := read()
	if len(a) != 3 || len(b) != 3 {
		t.Fatalf("stats of %d then %d ids, want 3 (fresh ones are remembered)", len(a), len(b))
	}
	for _, id := range ids {
		if b[id] <= a[id] {
			t.Errorf("%s views %d then %d a month later, want growth", id, a[id], b[id])
		}
	}
}

func TestCategoryCharts(t *testing.T) {
	t.Parallel()
	fx := newFixture(t)
	svc := fx.service(t)
	res, err := svc.Videos.List([]string{"snippet"}).Chart("mostPopular").RegionCode("US").VideoCategoryId("10").MaxResults(50).Do()
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Items) == 0 || res.PageInfo.TotalResults >= int64(ChartLengths["US"]) {
		t.Fatalf("music chart of US: %d items of %d, want a shorter chart than the whole", len(res.Items), res.PageInfo.TotalResults)
	}
	for _, it := range res.Items {
		if it.Snippet.CategoryId != "10" {
			t.Errorf("%s in the music chart has category %s", it.Id, it.Snippet.CategoryId)
		}
	}
	if _, err := svc.Videos.List([]string{"snippet"}).Chart("mostPopular").RegionCode("US").VideoCategoryId("44").Do(); err == nil ||
		!strings.Contains(err.Error(), "videoChartNotFound") {
		t.Errorf("a category without videos: err %v, want videoChartNotFound", err)
	}
}

package fakeyt

import (
	"slices"
	"testing"
)

// A renamed video is served under its new title in the chart and by id,
// through the real client; a video that leaves one region's chart is gone
// from that chart alone, the videos below it a rank higher.
func TestRetitledAndLeftVideos(t *testing.T) {
	t.Parallel()
	fx := newFixture(t)
	svc := fx.service(t)
	us, _ := fx.chartOf(t, "US")
	gb, _ := fx.chartOf(t, "GB")
	id := us[0]
	fx.fake.Retitle(id, "A new name")
	res, err := svc.Videos.List([]string{"snippet"}).Id(id).Do()
	if err != nil || len(res.Items) != 1 || res.Items[0].Snippet.Title != "A new name" {
		t.Fatalf("by id after Retitle: %v %+v", err, res)
	}
	chart, err := svc.Videos.List([]string{"snippet"}).Chart("mostPopular").RegionCode("US").MaxResults(5).Do()
	if err != nil || chart.Items[0].Id != id || chart.Items[0].Snippet.Title != "A new name" {
		t.Fatalf("the chart after Retitle: %v, first %s %q", err, chart.Items[0].Id, chart.Items[0].Snippet.Title)
	}

	fx.fake.Leave("US", us[1])
	after, _ := fx.chartOf(t, "US")
	want := slices.Delete(slices.Clone(us), 1, 2)
	if !slices.Equal(after, want) {
		t.Errorf("US after %s left it: %d videos, %s second; want %d, %s second", us[1], len(after), after[1], len(want), want[1])
	}
	if got, _ := fx.chartOf(t, "GB"); !slices.Equal(got, gb) {
		t.Errorf("GB changed when a video left US's chart")
	}
	fx.fake.Leave("US")
	if got, _ := fx.chartOf(t, "US"); !slices.Equal(got, us) {
		t.Errorf("US after Leave(US) is not whole again")
	}
}

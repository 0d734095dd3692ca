package fetch_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/ingestworks/ingest"
)

func TestChartOfACategory(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	p, err := e.client.Chart(ctx, e.gate.Gate, "US", "10", "")
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Videos) == 0 {
		t.Fatal("the music chart of US is empty")
	}
	for _, v := range p.Videos {
		if v.CategoryID != "10" {
			t.Errorf("%s in the music chart has category %s", v.ID, v.CategoryID)
		}
	}
	// A category the region has no chart for is ErrNoChart, and names it.
	_, err = e.client.Chart(ctx, e.gate.Gate, "US", "44", "")
	if !errors.Is(err, ingest.ErrNoChart) {
		t.Fatalf("trailers chart: err %v, want ErrNoChart", err)
	}
	if got := err.Error(); !strings.Contains(got, "US/44") {
		t.Errorf("error %q does not name the chart US/44", got)
	}
}

package jobs

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"slices"
	"testing"
	"time"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/clock"
	"github.com/ingestworks/ingest/internal/rig/storetest"
	"github.com/ingestworks/ingest/regions"
)

// The catalogue a daemon's start plans on when the upstream's does not
// come within the bound: the one stored, else the built-in copy, said at
// warn, the read left going on; a stored one younger than a day is not
// read at all, and a read that ends within the bound is the one planned on.
func TestStartCatalogueFallsBackToTheStoredThenTheBuiltIn(t *testing.T) {
	stored := []ingest.Region{{Code: "AD", Name: "Andorra"}, {Code: "US", Name: "United States"}}
	listed := regions.Catalogue{{Code: "FR", Name: "France"}}
	cases := []struct {
		name       string
		storedAt   time.Duration // how long ago the catalogue was stored; 0: none is
		answers    bool          // the upstream answers within the bound
		want       []string
		warned     string // the catalogue the warning names; "" none
		readBehind bool
		asked      bool
	}{
		{name: "a new host, a silent upstream", want: regions.Builtin.Codes(), warned: "built-in", readBehind: true, asked: true},
		{name: "a day-old catalogue, a silent upstream", storedAt: 25 * time.Hour, want: []string{"AD", "US"}, warned: "stored", readBehind: true, asked: true},
		{name: "a day-old catalogue, an upstream that answers", storedAt: 25 * time.Hour, answers: true, want: []string{"FR"}, asked: true},
		{name: "a catalogue read an hour ago", storedAt: time.Hour, want: []string{"AD", "US"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var logs bytes.Buffer
			db := storetest.Open(t)
			defer db.Close()
			kept := Catalogue{Store: db.RegionCatalogue(), Clock: clock.System, Logger: slog.New(slog.NewJSONHandler(&logs, nil))}
			// A start that waits on the silent read past its bound gives
			// it up here, and fails rather than hangs.
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			if c.storedAt > 0 {
				if err := db.RegionCatalogue().Save(ctx, stored, clock.System.Now().Add(-c.storedAt)); err != nil {
					t.Fatal(err)
				}
			}
			asked := false
			read := func(ctx context.Context) (regions.Catalogue, bool) {
				asked = true
				if c.answers {
					return listed, true
				}
				<-ctx.Done() // silent until the test ends
				return nil, false
			}
			bound := 50 * time.Millisecond
			if c.answers {
				bound = time.Hour // the read ends first whatever the machine's load
			}
			cat, late := kept.Start(ctx, read, bound)
			if got := cat.Codes(); !slices.Equal(got, c.want) {
				t.Errorf("planned on %v, want %v", got, c.want)
			}
			if (late != nil) != c.readBehind {
				t.Errorf("a read left behind: %v, want %v", late != nil, c.readBehind)
			}
			cancel()
			late.Wait()
			if asked != c.asked {
				t.Errorf("the upstream asked: %v, want %v", asked, c.asked)
			}
			if got := warnedCatalogue(t, &logs); got != c.warned {
				t.Errorf("the warning names the catalogue %q, want %q\n%s", got, c.warned, logs.String())
			}
		})
	}
}

// warnedCatalogue is the catalogue the start's warning names, "" when it
// gave none.
func warnedCatalogue(t *testing.T, logs *bytes.Buffer) string {
	t.Helper()
	for dec := json.NewDecoder(logs); ; {
		var line struct {
			Level     string `json:"level"`
			Catalogue string `json:"catalogue"`
		}
		if dec.Decode(&line) != nil {
			return ""
		}
		if line.Level == "WARN" && line.Catalogue != "" {
			return line.Catalogue
		}
	}
}

// TestReplanPlansAgainOnTheCatalogueThatMoved: a plan that ends because
// the catalogue read late moved its charts is planned again on that
// catalogue, as often as it moves; any other end is the plans' end.
func TestReplanPlansAgainOnTheCatalogueThatMoved(t *testing.T) {
	first := regions.Catalogue{{Code: "FR", Name: "France"}}
	second := regions.Catalogue{{Code: "DE", Name: "Germany"}}
	var logs bytes.Buffer
	var got []regions.Catalogue
	stopped := context.Canceled
	err := Replan(slog.New(slog.NewJSONHandler(&logs, nil)), func(read regions.Catalogue) error {
		got = append(got, read)
		switch len(got) {
		case 1:
			return &CatalogueMoved{Got: first}
		case 2:
			return &CatalogueMoved{Got: second}
		}
		return stopped
	})
	if err != stopped {
		t.Errorf("Replan = %v, want the last plan's end", err)
	}
	if want := []regions.Catalogue{nil, first, second}; len(got) != len(want) || got[0] != nil || !slices.Equal(got[1], first) || !slices.Equal(got[2], second) {
		t.Errorf("planned on %v, want %v", got, want)
	}
	if n := bytes.Count(logs.Bytes(), []byte("plans and starts its passes again")); n != 2 {
		t.Errorf("said the move %d times, want 2:\n%s", n, logs.String())
	}
}

// TestLateReadMovedOnlyWhenThePlanEndedCleanly: a plan's end is a move
// only when it ended without error and the read late moved its charts; a
// plan without a read late never moved.
func TestLateReadMovedOnlyWhenThePlanEndedCleanly(t *testing.T) {
	late := &LateRead{Got: regions.Catalogue{{Code: "FR", Name: "France"}}, done: make(chan struct{})}
	closed, open := make(chan struct{}), make(chan struct{})
	close(closed)
	failed := context.DeadlineExceeded
	var moved *CatalogueMoved
	if err := late.Moved(nil, closed); !errors.As(err, &moved) || !slices.Equal(moved.Got, late.Got) {
		t.Errorf("a clean end, the charts moved: %v, want the move with the catalogue read", err)
	}
	for name, err := range map[string]error{
		"a clean end, nothing moved": late.Moved(nil, open),
		"no read late":               (*LateRead)(nil).Moved(nil, nil),
	} {
		if err != nil {
			t.Errorf("%s: %v, want nil", name, err)
		}
	}
	if err := late.Moved(failed, closed); err != failed {
		t.Errorf("a failed end, the charts moved: %v, want the failure", err)
	}
}

// TestPlannedOnTheCatalogueReadBefore: a plan after a move runs on the
// catalogue read late, asking neither the store nor the upstream.
func TestPlannedOnTheCatalogueReadBefore(t *testing.T) {
	read := regions.Catalogue{{Code: "FR", Name: "France"}}
	cat, late, end := Catalogue{Clock: clock.System}.Planned(context.Background(), read, false, nil, time.Second)
	defer end()
	if !slices.Equal(cat, read) || late != nil {
		t.Errorf("Planned = %v, %v; want the catalogue read before and no read late", cat, late)
	}
}

package report

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/ingestworks/ingest/pace"
)

// The slots the pacing daemon declined, published with its plan, are
// shown as declined, not missed: the slot after a catch-up as caught up.
func TestReportShowsDeclinedSlots(t *testing.T) {
	t.Parallel()
	st := pace.Status{At: time.Date(2026, 11, 1, 8, 0, 0, 0, time.UTC), Entries: []pace.EntryStatus{
		{Name: "US", Floor: time.Hour, Every: time.Hour, Declined: map[pace.Declined]int{pace.DeclinedCaughtUp: 1}},
		{Name: "GB", Floor: time.Hour, Every: 2 * time.Hour, Declined: map[pace.Declined]int{pace.DeclinedUnearned: 3, pace.DeclinedCaughtUp: 1}},
		{Name: "DE", Floor: time.Hour, Every: time.Hour},
	}}
	doc, err := json.Marshal(st) // as the daemon publishes it
	if err != nil {
		t.Fatal(err)
	}
	var published pace.Status
	if err := json.Unmarshal(doc, &published); err != nil {
		t.Fatal(err)
	}
	f := of(published)
	f.Daemon = true
	var out bytes.Buffer
	(&Report{Freshness: f}).textFreshness(&out)
	want := "Declined slots since the daemon started (planned, not missed): US 1 caught up, GB 1 caught up, GB 3 not earned\n"
	if !strings.Contains(out.String(), want) {
		t.Errorf("the report's pace section does not say %q:\n%s", want, out.String())
	}
}

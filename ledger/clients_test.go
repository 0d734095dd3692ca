package ledger

import (
	"context"
	"maps"
	"testing"
	"time"

	"github.com/ingestworks/ingest"
)

// A client's spend is its calls' units from the day's start on, by pool,
// the daemon's own calls and the calls given back left out; the client
// rides along when the call is read back.
func TestClientUnitsCountTheClientsCallsOfTheDay(t *testing.T) {
	eachStore(t, func(t *testing.T, db both) {
		ctx := context.Background()
		day := time.Date(2026, 11, 28, 8, 0, 0, 0, time.UTC)
		calls := []ingest.Call{
			{ID: "yesterday", At: day.Add(-time.Minute), Client: "ann", Charges: []ingest.Charge{{Pool: "default", Units: 7}}},
			{ID: "a1", At: day, Client: "ann", Charges: []ingest.Charge{{Pool: "default", Units: 1}}},
			{ID: "a2", At: day.Add(time.Hour), Client: "ann", Charges: []ingest.Charge{{Pool: "search", Units: 100}}},
			{ID: "b1", At: day.Add(time.Hour), Client: "bob", Charges: []ingest.Charge{{Pool: "default", Units: 1}}},
			{ID: "back", At: day.Add(time.Hour), Client: "bob", Charges: []ingest.Charge{{Pool: "default", Units: 5}}},
			{ID: "daemon", At: day.Add(time.Hour), Region: "US", Charges: []ingest.Charge{{Pool: "default", Units: 1}}},
		}
		for _, c := range calls {
			c.QuotaKey, c.Op = "k", ingest.OpVideosList
			if err := db.RecordCall(ctx, c); err != nil {
				t.Fatal(err)
			}
		}
		if err := db.RecordGiveBack(ctx, ingest.Call{QuotaKey: "k", ID: "back"}, day.Add(time.Hour)); err != nil {
			t.Fatal(err)
		}
		got, err := db.ClientUnits(ctx, "k", day)
		if err != nil {
			t.Fatal(err)
		}
		want := map[string]map[string]int64{"ann": {"default": 1, "search": 100}, "bob": {"default": 1}}
		if !maps.EqualFunc(got, want, maps.Equal) {
			t.Errorf("ClientUnits = %v, want %v", got, want)
		}
		read, err := db.Calls(ctx, "k", day)
		if err != nil {
			t.Fatal(err)
		}
		if len(read) == 0 || read[0].Client != "ann" {
			t.Errorf("Calls read back %+v, want ann's call first with its client", read)
		}
	})
}

package ledger

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/internal/rig/storetest"
)

// TestReadQuotaKey: a reader reports on the key given, else the API key's
// hash, else the one key its ledger spent on; with none spent it says "-"
// on a host of its own, and a configuration error where a shared limiter
// or a database could hold one, as with several keys to choose from.
func TestReadQuotaKey(t *testing.T) {
	ctx := context.Background()
	spent := func(t *testing.T, keys ...string) *Ledger {
		l := New(storetest.Open(t))
		for i, k := range keys {
			if err := l.RecordCall(ctx, ingest.Call{QuotaKey: k, ID: k + "-call", Op: ingest.OpVideosList, At: time.Unix(int64(i+1)*60, 0),
				Charges: []ingest.Charge{{Pool: ingest.DefaultPool, Units: 1}}}); err != nil {
				t.Fatal(err)
			}
		}
		return l
	}
	for _, c := range []struct {
		name, given, apiKey string
		keys                []string // spent on; nil: no database
		shared              bool
		want                string // "" a configuration error
	}{
		{name: "given", given: "q", apiKey: "secret", keys: []string{"a"}, want: "q"},
		{name: "the API key's hash", apiKey: "secret", keys: []string{"a"}, want: KeyHash("secret")},
		{name: "the ledger's one key", keys: []string{"a"}, want: "a"},
		{name: "several keys", keys: []string{"a", "b"}},
		{name: "an empty database", keys: []string{}},
		{name: "no database, no shared limiter", want: "-"},
		{name: "no database, a shared limiter", shared: true},
	} {
		t.Run(c.name, func(t *testing.T) {
			var l *Ledger
			if c.keys != nil {
				l = spent(t, c.keys...)
			}
			got, err := ReadQuotaKey(ctx, c.given, c.apiKey, l, c.shared)
			var ce *ingest.ConfigError
			if c.want == "" {
				if !errors.As(err, &ce) {
					t.Errorf("got %q, %v; want a configuration error", got, err)
				}
				return
			}
			if err != nil || got != c.want {
				t.Errorf("got %q, %v; want %q", got, err, c.want)
			}
		})
	}
	if KeyHash("secret") == KeyHash("other") || len(KeyHash("secret")) != 8 {
		t.Errorf("KeyHash: %q, %q", KeyHash("secret"), KeyHash("other"))
	}
}

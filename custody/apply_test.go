package custody

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/internal/rig/clocktest"
	"github.com/ingestworks/ingest/quota"
)

// configured is a limiter as quota apply sees it: the pools it holds, and
// what it was given.
type configured struct {
	confs   []quota.PoolConfig
	applied bool
	created map[string]ingest.Recalled
}

func (c *configured) Backend() string { return "redis" }

func (c *configured) Config(context.Context) ([]quota.PoolConfig, error) { return c.confs, nil }

func (c *configured) ApplyConfig(context.Context) ([]quota.ConfigChange, error) {
	c.applied = true
	return nil, nil
}

// creating is a Redis limiter as quota apply sees it: its key created
// from the ledgers given.
type creating struct{ configured }

func (c *creating) Create(_ context.Context, _ bool, others map[string]ingest.Recalled) ([]quota.ConfigChange, error) {
	c.created = others
	return nil, nil
}

// TestApplyNewRefusesAKeyCreatedOtherwise: --new on a key whose limiter
// holds another configuration is refused, naming apply without --new; the
// same configuration again, or none, goes on.
func TestApplyNewRefusesAKeyCreatedOtherwise(t *testing.T) {
	const conf = "10000:500:86400000:America/Los_Angeles"
	path, _ := database(t)
	h := host(t, path, "redis://a:6379/0", clocktest.NewFake(start))
	for _, tc := range []struct {
		name    string
		confs   []quota.PoolConfig
		refused bool
	}{
		{"none held", []quota.PoolConfig{{Pool: "default", Costs: conf}}, false},
		{"the same held", []quota.PoolConfig{{Pool: "default", Limiter: conf, Costs: conf}}, false},
		{"another held", []quota.PoolConfig{{Pool: "default", Limiter: "9000:0:86400000:", Costs: conf}, {Pool: "search", Costs: conf}}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := &configured{confs: tc.confs}
			_, err := h.Apply(context.Background(), l, key, true, nil)
			if !tc.refused {
				if err != nil || !l.applied {
					t.Errorf("got %v, applied %v; want it applied", err, l.applied)
				}
				return
			}
			if _ = refused[*ingest.ConfigError](t, err); !strings.Contains(err.Error(), "without --new") || l.applied {
				t.Errorf("got %v, applied %v; want a refusal naming apply without --new", err, l.applied)
			}
		})
	}
}

// TestApplyCreatesAKeyFromTheLedgersGiven: on Redis, the key is created
// with the calls of the window of every ledger given, named without a
// password.
func TestApplyCreatesAKeyFromTheLedgersGiven(t *testing.T) {
	ctx := context.Background()
	path, db := database(t)
	record(t, db.Ledger, call("c1", start.Add(-time.Hour), 1), call("old", start.Add(-25*time.Hour), 1))
	h := host(t, path, "redis://a:6379/0", clocktest.NewFake(start))
	l := &creating{}
	if _, err := h.Apply(ctx, l, key, false, []string{path}); err != nil {
		t.Fatal(err)
	}
	if rec, ok := l.created[path]; !ok || len(rec.Calls) != 1 || rec.Calls[0].ID != "c1" {
		t.Errorf("created from %+v, want the window's one call of %s", l.created, path)
	}
	if _, err := h.Apply(ctx, l, key, false, []string{t.TempDir() + "/none.db"}); err == nil {
		t.Error("a --ledger that is no database: no error")
	}
}

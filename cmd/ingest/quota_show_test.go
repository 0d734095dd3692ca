package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/ingestworks/ingest/quota"
)

// quota show never says a pool the limiter holds nothing for agrees: it
// says nothing is stored and what will store it, by backend; a pool that
// holds the costs file's settings agrees, and one that holds others
// differs.
func TestQuotaShowSaysWhatIsNotStored(t *testing.T) {
	t.Parallel()
	const conf = "10000:500:86400000:America/Los_Angeles"
	held := quota.PoolConfig{Pool: "default", Limiter: conf, Costs: conf}
	empty := quota.PoolConfig{Pool: "search", Costs: "100:0:86400000:America/Los_Angeles"}
	other := quota.PoolConfig{Pool: "stats", Limiter: "9000:0:86400000:", Costs: "10000:0:86400000:America/Los_Angeles"}
	for _, tc := range []struct {
		name, backend string
		confs         []quota.PoolConfig
		want          []string
	}{
		{"embedded", "sqlite", []quota.PoolConfig{held, empty}, []string{"(agrees)", "pool search   limiter:    nothing stored yet", "(stored by the pool's first call)"}},
		{"redis, a key nobody created", "redis", []quota.PoolConfig{empty}, []string{"nothing stored yet", "`ingest quota apply --new`"}},
		{"redis, a pool never applied", "redis", []quota.PoolConfig{held, empty}, []string{"(agrees)", "MISSING", "run `ingest quota apply`"}},
		{"different settings", "postgres", []quota.PoolConfig{other}, []string{"DIFFERS"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var b bytes.Buffer
			showPools(&b, tc.confs, tc.backend)
			for _, want := range tc.want {
				if !strings.Contains(b.String(), want) {
					t.Errorf("does not say %q:\n%s", want, b.String())
				}
			}
			if strings.Contains(b.String(), "(none yet)") {
				t.Errorf("says (none yet) beside how the pools stand:\n%s", b.String())
			}
			if agree, held := strings.Count(b.String(), "(agrees)"), strings.Count(b.String(), "limiter:    limit"); agree > held {
				t.Errorf("%d pools agree, but the limiter holds settings for %d:\n%s", agree, held, b.String())
			}
		})
	}
}

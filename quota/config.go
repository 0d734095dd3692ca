package quota

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/ingestworks/ingest"
)

// ConfigError says that the limiter holds a pool with other settings than
// this process's costs file: every process sharing a quota key must agree,
// or each would trim the others' log by its own window. It is a
// configuration error (exit 2), found before anything is spent.
type ConfigError struct {
	QuotaKey   string
	Pool       string
	Field      string // limit, reserve, window or day
	Limiter    string // the value the limiter holds
	CostsValue string // the value of this process's costs file
}

func (e *ConfigError) Error() string {
	return fmt.Sprintf("quota key %s: pool %s: %s is %s in the limiter but %s in this costs file; "+
		"every worker sharing the quota key must agree: use the same costs file, or run `ingest quota apply` to replace the limiter's",
		e.QuotaKey, e.Pool, e.Field, e.Limiter, e.CostsValue)
}

// poolConf is a pool's settings as the limiter keeps them:
// "limit:reserve:window_ms:day".
func poolConf(p ingest.Pool) string {
	return fmt.Sprintf("%d:%d:%d:%s", p.Limit, p.Reserve, p.Window.Milliseconds(), p.DayName())
}

// confFields splits a stored configuration into named, readable values.
func confFields(s string) map[string]string {
	f := strings.SplitN(s, ":", 4)
	for len(f) < 4 {
		f = append(f, "")
	}
	window := f[2]
	if ms, err := strconv.ParseInt(f[2], 10, 64); err == nil {
		window = (time.Duration(ms) * time.Millisecond).String()
	}
	day := f[3]
	if day == "" {
		day = "(none)"
	}
	return map[string]string{"limit": f[0], "reserve": f[1], "window": window, "day": day}
}

// confError names the first field where the limiter's stored conf differs
// from the pool's.
func confError(quotaKey string, p ingest.Pool, stored string) *ConfigError {
	if stored == "" {
		return &ConfigError{QuotaKey: quotaKey, Pool: p.Name, Field: "pool", Limiter: "missing", CostsValue: "set"}
	}
	have, want := confFields(stored), confFields(poolConf(p))
	for _, field := range []string{"limit", "reserve", "window", "day"} {
		if have[field] != want[field] {
			return &ConfigError{QuotaKey: quotaKey, Pool: p.Name, Field: field, Limiter: have[field], CostsValue: want[field]}
		}
	}
	return &ConfigError{QuotaKey: quotaKey, Pool: p.Name, Field: "settings", Limiter: stored, CostsValue: poolConf(p)}
}

// ConfigChange is one pool whose settings `ingest quota apply` replaced.
type ConfigChange struct {
	Pool     string
	Old, New string // "limit:reserve:window_ms:day", Old "" when the limiter had none
}

func (c ConfigChange) String() string {
	if c.Old == "" {
		return fmt.Sprintf("pool %s: set %s", c.Pool, describeConf(c.New))
	}
	return fmt.Sprintf("pool %s: %s -> %s", c.Pool, describeConf(c.Old), describeConf(c.New))
}

func describeConf(s string) string {
	f := confFields(s)
	return fmt.Sprintf("limit %s, reserve %s, window %s, day %s", f["limit"], f["reserve"], f["window"], f["day"])
}

// PoolConfig is what the limiter holds for one pool, for `ingest quota show`.
type PoolConfig struct {
	Pool    string
	Limiter string // "" when the limiter holds nothing yet
	Costs   string
}

// Agrees reports whether the limiter holds nothing or the same settings.
func (c PoolConfig) Agrees() bool { return c.Limiter == "" || c.Limiter == c.Costs }

// held reports whether the limiter holds settings for any pool: the quota
// key was created.
func held(cur []PoolConfig) bool {
	return slices.ContainsFunc(cur, func(c PoolConfig) bool { return c.Limiter != "" })
}

// Describe renders a stored configuration for people.
func Describe(conf string) string {
	if conf == "" {
		return "(none yet)"
	}
	return describeConf(conf)
}

// checkConfig returns a *ConfigError for the first pool whose stored
// settings differ. With whole (Redis), a pool the limiter lacks beside
// others it holds differs too: it was never applied.
func checkConfig(ctx context.Context, opts settings, config func(context.Context) ([]PoolConfig, error), whole bool) error {
	cur, err := config(ctx)
	if err != nil {
		return err
	}
	created := whole && held(cur)
	for _, c := range cur {
		if !c.Agrees() || (created && c.Limiter == "") {
			p, _ := opts.Costs.Pool(c.Pool)
			return confError(opts.QuotaKey, p, c.Limiter)
		}
	}
	return nil
}

// changes lists the pools whose stored settings an apply replaces.
func changes(cur []PoolConfig) []ConfigChange {
	var out []ConfigChange
	for _, c := range cur {
		if c.Limiter != c.Costs {
			out = append(out, ConfigChange{Pool: c.Pool, Old: c.Limiter, New: c.Costs})
		}
	}
	return out
}

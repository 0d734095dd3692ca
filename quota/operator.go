package quota

// The operator's side: one configuration per quota key (every backend),
// creating a Redis quota key without erasing a loss, and what `quota show`
// and `ingest check` say.

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
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
		return fmt.Sprintf("pool %s: set %s", c.Pool, Describe(c.New))
	}
	return fmt.Sprintf("pool %s: %s -> %s", c.Pool, Describe(c.Old), Describe(c.New))
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
	f := confFields(conf)
	return fmt.Sprintf("limit %s, reserve %s, window %s, day %s", f["limit"], f["reserve"], f["window"], f["day"])
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

// configs lists, per pool, what the limiter holds (stored) beside this
// costs file.
func (s *settings) configs(stored func(int, ingest.Pool) (string, error)) ([]PoolConfig, error) {
	out := make([]PoolConfig, len(s.Costs.Pools))
	for i, p := range s.Costs.Pools {
		c, err := stored(i, p)
		if err != nil {
			return nil, fmt.Errorf("read configuration: %w", err)
		}
		out[i] = PoolConfig{Pool: p.Name, Costs: poolConf(p), Limiter: c}
	}
	return out, nil
}

// PastError says that a quota key apply was asked to create was used: the
// limiter still holds some of it, or a ledger holds calls of it within the
// pools' span. A new configuration would erase the loss.
type PastError struct {
	QuotaKey string
	Signs    []string      // what shows it, one line each
	Span     time.Duration // the pools' span: how far back a host's calls count
	// Way is which case it is, when the limiter can tell: WayLoss,
	// WayMove, or "" when a new Redis the hosts moved to looks the same
	// as one that lost everything.
	Way string
}

// The cases a used key without configuration may be (PastError.Way).
const (
	// WayLoss: this Redis still holds part of the key; it lost the rest.
	WayLoss = "loss"
	// WayMove: nothing of the key is in this Redis, and this database's
	// ledger spent without any Redis limiter: a move from the embedded one.
	WayMove = "move"
)

func (e *PastError) Error() string {
	msg := fmt.Sprintf("quota key %s holds no configuration in the limiter, but it was used: %s. "+
		"Creating the key anew would let the window's calls be spent again. "+
		"If the hosts moved to this Redis (from the embedded limiter or another Redis), run `ingest quota seed --ledger DB...` "+
		"with the database of every host that spent in the last %s; if this Redis lost its data, run "+
		"`ingest quota restore --ledger DB...` with the same, or let the workers wait (the first run of a host that spent finds the loss, "+
		"and the limiter waits for the others)", e.QuotaKey, strings.Join(e.Signs, "; "), e.Span)
	switch e.Way {
	case WayLoss:
		return msg + ". This is a loss: the limiter still holds part of the key, so run `ingest quota restore`"
	case WayMove:
		return msg + ". This is a move: nothing of the key is in this Redis, and this database's ledger spent on the embedded " +
			"limiter, never on a Redis one, so run `ingest quota seed`"
	}
	return msg + ". Nothing here tells a new Redis from a wiped one: the operator knows which it is"
}

// Create is `ingest quota apply`: on a quota key that holds a
// configuration it replaces it; on one that holds none it asks for intent,
// isNew, and refuses with a *PastError when anything shows the key was
// used, in the limiter or in this ledger or others (by name).
func (r *Redis) Create(ctx context.Context, isNew bool, others map[string]ingest.Recalled) ([]ConfigChange, error) {
	cur, err := r.Config(ctx)
	if err != nil {
		return nil, err
	}
	if held(cur) {
		return r.ApplyConfig(ctx)
	}
	signs, way, err := r.past(ctx, others)
	switch {
	case err != nil:
		return nil, err
	case len(signs) > 0:
		return nil, &PastError{QuotaKey: r.opts.QuotaKey, Signs: signs, Span: r.opts.Costs.Span(), Way: way}
	case !isNew:
		return nil, fmt.Errorf("%w %s, and nothing shows it was used: %s", ErrNotApplied, r.opts.QuotaKey, intent(r.opts.QuotaKey, r.opts.Costs.Span()))
	}
	return r.ApplyConfig(ctx)
}

// intent names the ways on from a key with no configuration, the safe one
// first (RestoreFirst).
func intent(key string, span time.Duration) string {
	return RestoreFirst(span) + "; only if the key was never used, run `ingest quota apply --new=" + key + "` (the key typed again)"
}

// RestoreFirst names the safe ways on from a key with no configuration:
// a wipe looks the same as a new key to a host that did not spend
// (docs/explanation/quota.md), and creating a wiped key lets its calls be spent again.
// span is the pools' span; zero when it is not known yet.
func RestoreFirst(span time.Duration) string {
	within := "in the last " + span.String()
	if span == 0 {
		within = "within the pools' window and day"
	}
	return "if Redis lost its data, do not create the key: run `ingest quota restore --ledger DB...` with the database of every host that spent " +
		within + ", or wait: the first run of a host that spent finds the loss, and the limiter waits for the others"
}

// past lists what shows that the quota key was used, and which case it
// is when it can tell (PastError.Way).
func (r *Redis) past(ctx context.Context, others map[string]ingest.Recalled) (signs []string, way string, err error) {
	st, err := r.Status(ctx)
	if err != nil {
		return nil, "", err
	}
	for _, l := range st.Ledgers {
		signs = append(signs, fmt.Sprintf("the limiter lists ledger %s (%s), last call %s", l.Ledger, l.Where, l.Mark))
	}
	for _, p := range st.Pools {
		if p.Used > 0 || p.UsedDay > 0 {
			signs = append(signs, fmt.Sprintf("pool %s holds %d units in its window", p.Pool, max(p.Used, p.UsedDay)))
		}
	}
	if st.Recovering {
		signs = append(signs, "a recovery is under way")
	}
	if len(signs) > 0 {
		way = WayLoss
	}
	own, err := r.opts.recall(ctx)
	if err != nil {
		return nil, "", err
	}
	since := r.opts.Now().Add(-r.opts.Costs.Span())
	if s := callsSince("this database's ledger", own, since); s != "" {
		signs = append(signs, s)
		// A ledger that spent on a Redis limiter keeps a copy of its list
		// of ledgers; one that never did spent on the embedded limiter.
		if copied, err := r.opts.Notes.Noted(ctx, r.led.noteName("ledgers")); err == nil && copied == "" && way == "" {
			way = WayMove
		}
	}
	for _, name := range slices.Sorted(maps.Keys(others)) {
		if s := callsSince("ledger "+name, others[name], since); s != "" {
			signs = append(signs, s)
		}
	}
	return signs, way, nil
}

// callsSince says how many calls rec holds after since, "" for none.
func callsSince(what string, rec ingest.Recalled, since time.Time) string {
	n, newest := 0, time.Time{}
	for _, c := range rec.Calls {
		if c.At.After(since) {
			n++
			if c.At.After(newest) {
				newest = c.At
			}
		}
	}
	if n == 0 {
		return ""
	}
	return fmt.Sprintf("%s holds %d calls since %s, the newest at %s", what, n,
		since.UTC().Format(time.RFC3339), newest.UTC().Format(time.RFC3339))
}

// adopt writes this costs file's configuration when the limiter holds
// none: after a restore, so that its workers go on rather than wait for an
// apply.
func (r *Redis) adopt(ctx context.Context) error {
	cur, err := r.Config(ctx)
	if err != nil || held(cur) {
		return err
	}
	_, err = r.ApplyConfig(ctx)
	return err
}

// Readiness is ingest check's word on a Redis limiter that holds this
// costs file's pools: whether it lost its data (no configuration, yet the
// key was created: this ledger spent in its span) and how it keeps it. The
// error is ErrNotApplied when it holds no configuration for a key this
// ledger never spent on.
func (r *Redis) Readiness(ctx context.Context) (string, error) {
	detail := "the limiter holds this costs file's pools"
	if err := r.Created(ctx); err != nil {
		return "", err
	}
	if cur, err := r.Config(ctx); err == nil && !held(cur) {
		detail = "the limiter holds no configuration, but this database's ledger spent in its span: Redis lost data, " +
			"or it is a new one the hosts moved to. After a loss the first run puts its calls back and waits for the other hosts " +
			"(or run `ingest quota restore --ledger DB...`); for a new Redis run `ingest quota seed --ledger DB...` with every " +
			"host's database before the first run"
	}
	kept, how, err := r.Persistence(ctx)
	switch {
	case err != nil:
		detail += "; persistence unknown (" + err.Error() + ")"
	case !kept:
		detail += "; WARNING: Redis keeps " + how + ": set appendonly yes (docs/explanation/quota.md)"
	default:
		detail += "; Redis keeps " + how
	}
	return detail, nil
}

// Persistence reports whether the Redis server keeps its data across a
// restart (AOF, or RDB snapshots), as far as CONFIG GET may tell.
func (r *Redis) Persistence(ctx context.Context) (kept bool, detail string, err error) {
	ctx, cancel := context.WithTimeout(ctx, max(r.opts.Timeout, OperatorTimeout))
	defer cancel()
	aof, err := r.client.ConfigGet(ctx, "appendonly").Result()
	if err != nil {
		return false, "", fmt.Errorf("CONFIG GET appendonly: %w", err)
	}
	save, err := r.client.ConfigGet(ctx, "save").Result()
	if err != nil {
		return false, "", fmt.Errorf("CONFIG GET save: %w", err)
	}
	switch {
	case aof["appendonly"] == "yes":
		return true, "AOF", nil
	case strings.TrimSpace(save["save"]) != "":
		return true, "RDB snapshots only (save " + save["save"] + "): a restart may bring back an older state, which the limiter notices and waits out", nil
	}
	return false, "neither AOF nor RDB: a restart loses every count, and the limiter then waits for the ledgers", nil
}

// WarnForgetful warns on log when the Redis keeps no data across a
// restart (Persistence): a restart would lose every count, and the limiter
// would then wait for the ledgers. A Redis that will not say is left to
// readyz, which tells it.
func (r *Redis) WarnForgetful(ctx context.Context, log *slog.Logger) {
	if kept, detail, err := r.Persistence(ctx); err == nil && !kept {
		log.Warn("the Redis of the limiter keeps no data across a restart: use appendonly yes (see docs/explanation/quota.md)", "detail", detail)
	}
}

// Created returns an error wrapping ErrNotApplied when the limiter holds no
// configuration for this quota key and this ledger has no calls in the
// pools' span: a key never created (`ingest quota apply --new`), or one
// whose Redis lost its data while this ledger spent nothing (`ingest quota
// restore`, or the wait). A worker checks it before it spends anything.
func (r *Redis) Created(ctx context.Context) error {
	conf, err := r.Config(ctx)
	if err != nil || held(conf) {
		return err
	}
	if ok, err := r.spent(ctx); err != nil || ok {
		return err // lost data: the first call recovers
	}
	return r.notApplied()
}

func (r *Redis) notApplied() error {
	return fmt.Errorf("%w %s, and this ledger holds no calls in its span: %s", ErrNotApplied, r.opts.QuotaKey, intent(r.opts.QuotaKey, r.opts.Costs.Span()))
}

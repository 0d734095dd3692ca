package quota

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ingestworks/ingest"
)

// Notebook keeps a few small values in the ledger's own database, so that
// the next process on it (a cron job's next run) knows them too: this
// ledger's copy of the limiter's list of ledgers, and its clock reference.
type Notebook interface {
	Note(ctx context.Context, name, value string) error
	Noted(ctx context.Context, name string) (string, error) // "" when none
}

type memNotes struct{ m sync.Map }

func (n *memNotes) Note(_ context.Context, name, value string) error {
	n.m.Store(name, value)
	return nil
}

func (n *memNotes) Noted(_ context.Context, name string) (string, error) {
	v, _ := n.m.Load(name)
	s, _ := v.(string)
	return s, nil
}

// ledgerView is what this ledger knows of itself and of the limiter.
type ledgerView struct {
	opts     settings
	recallMu sync.Mutex  // one refill at a time
	beating  atomic.Bool // this process heartbeats (Run): it looks every Beat
	// looked: this process was admitted a call while it heartbeat, so the
	// ledger has looked every Beat since its last call
	looked atomic.Bool

	mu     sync.Mutex
	loaded bool
	mark   string    // the highest metered call id this ledger holds
	boot   int64     // the boot the reference belongs to
	ref    int64     // the limiter's clock minus this boot's uptime, ms
	copyAt time.Time // when it last copied the limiter's ledgers

	// The notes' writes, which fail at every Beat while the database is
	// down: each said as one fault, not a line a Beat.
	clockFault, copyFault fault
}

func (v *ledgerView) noteName(kind string) string { return kind + ":" + v.opts.QuotaKey }

// load reads, once, the ledger's mark and the clock reference.
func (v *ledgerView) load(ctx context.Context, r *Redis) error {
	v.mu.Lock()
	loaded := v.loaded
	v.mu.Unlock()
	if loaded {
		return nil
	}
	rec, err := v.opts.recall(ctx)
	if err != nil {
		return err
	}
	ref, _ := v.opts.Notes.Noted(ctx, v.noteName("clock"))
	v.mu.Lock()
	defer v.mu.Unlock()
	for _, c := range rec.Calls {
		if !c.Unmetered {
			v.mark = laterID(v.mark, c.ID)
		} else {
			// Taken by an earlier process during an outage: written
			// into the window at the first answer (answered).
			r.fail.pending.Store(true)
		}
	}
	if b, at, ok := strings.Cut(ref, " "); ok {
		v.boot, _ = strconv.ParseInt(b, 10, 64)
		v.ref, _ = strconv.ParseInt(at, 10, 64)
	}
	v.loaded = true
	return nil
}

// laterID is the later of two metered call ids ("" for none).
func laterID(a, b string) string {
	am, as, aerr := parseID(a)
	bm, bs, berr := parseID(b)
	switch {
	case berr != nil:
		return a
	case aerr != nil || bm > am || (bm == am && bs > as):
		return b
	}
	return a
}

// clockArgs are a spend's mark, clock reference and uptime: the reference
// counts only on the boot it was taken on.
func (v *ledgerView) clockArgs() (mark string, ref, up int64) {
	v.mu.Lock()
	defer v.mu.Unlock()
	boot, since, ok := v.uptime()
	if ok && boot == v.boot {
		ref = v.ref
	}
	if ok {
		up = since.Milliseconds()
	}
	return v.mark, ref, up
}

func (v *ledgerView) uptime() (int64, time.Duration, bool) {
	if v.opts.Uptime == nil {
		return 0, 0, false
	}
	boot, since, ok := v.opts.Uptime()
	return bootHash(boot), since, ok
}

// decided takes in a decision: the mark moves to an admitted call; a
// decision the guard let through moves the clock reference; and every
// Beat the limiter's list of ledgers is copied, for a recovery to name.
func (v *ledgerView) decided(ctx context.Context, r *Redis, rep reply) {
	v.mu.Lock()
	if rep.ID != "" {
		v.mark = laterID(v.mark, rep.ID)
		if v.beating.Load() {
			v.looked.Store(true)
		}
	}
	var save string
	if boot, since, ok := v.uptime(); ok && !rep.Guarded {
		ref := rep.At - since.Milliseconds()
		if boot != v.boot || ref-v.ref > time.Second.Milliseconds() || v.ref-ref > time.Second.Milliseconds() {
			v.boot, v.ref = boot, ref
			save = fmt.Sprintf("%d %d", boot, ref)
		}
	}
	now := v.opts.Now()
	copyDue := now.Sub(v.copyAt) >= v.opts.Beat
	if copyDue {
		v.copyAt = now
	}
	v.mu.Unlock()
	if save != "" {
		v.noted(&v.clockFault, "keep the clock reference in the ledger", v.opts.Notes.Note(ctx, v.noteName("clock"), save))
	}
	if copyDue {
		if st, err := r.Status(ctx); err == nil && !st.Recovering {
			v.keepCopy(ctx, st.At, st.Ledgers)
		}
	}
}

// ledgerCopy is this ledger's copy of the limiter's ledgers, as of At (the
// limiter's clock).
type ledgerCopy struct {
	At      int64        `json:"at"`
	Ledgers []LedgerSeen `json:"ledgers"`
}

// keepCopy keeps the limiter's list of ledgers, merged with the copy
// before it: a ledger the limiter no longer lists (a rollback it has not
// noticed) stays named while it spent within the span.
func (v *ledgerView) keepCopy(ctx context.Context, at int64, ls []LedgerSeen) {
	var old ledgerCopy
	if raw, err := v.opts.Notes.Noted(ctx, v.noteName("ledgers")); err == nil && raw != "" {
		_ = json.Unmarshal([]byte(raw), &old)
	}
	span := v.opts.Costs.Span().Milliseconds()
	for _, o := range old.Ledgers {
		if o.At > at-span && !slices.ContainsFunc(ls, func(l LedgerSeen) bool { return l.Ledger == o.Ledger }) {
			ls = append(ls, o)
		}
	}
	b, _ := json.Marshal(ledgerCopy{At: at, Ledgers: ls})
	v.noted(&v.copyFault, "keep the copy of the limiter's ledgers", v.opts.Notes.Note(ctx, v.noteName("ledgers"), string(b)))
}

// noted says a note's write as its fault f, named what: a failure starts
// or goes on, a success ends it.
func (v *ledgerView) noted(f *fault, what string, err error) {
	if err != nil {
		f.fail(v.opts.Logger, what, v.opts.Now(), err)
		return
	}
	f.ok(v.opts.Logger, what, v.opts.Now())
}

// vouch names the ledgers that spent in the window: this one, and those of
// its copy of the limiter's list that spent within a span of now. A copy
// older than a span cannot tell who spent since: it names nobody, and the
// recovery waits for time to pass (or for `quota restore`).
func (v *ledgerView) vouch(ctx context.Context) []string {
	raw, err := v.opts.Notes.Noted(ctx, v.noteName("ledgers"))
	var c ledgerCopy
	if err != nil || raw == "" || json.Unmarshal([]byte(raw), &c) != nil {
		return nil
	}
	now, span := v.opts.Now().UnixMilli(), v.opts.Costs.Span().Milliseconds()
	if now-c.At > span {
		return nil
	}
	need := []string{v.opts.ID}
	for _, l := range c.Ledgers {
		if l.At > now-span && !slices.Contains(need, l.Ledger) {
			need = append(need, l.Ledger)
		}
	}
	slices.Sort(need[1:])
	return need
}

// recover handles lost data the script found: it starts a recovery (the
// pools wait for the ledgers that spent, named by this ledger's copy),
// unless one is under way, and puts this ledger's calls back.
func (r *Redis) recover(ctx context.Context, why string) error {
	r.led.recallMu.Lock()
	defer r.led.recallMu.Unlock()
	rec, err := r.opts.recall(ctx)
	if err != nil {
		return err
	}
	a := r.base(r.opts.Costs.Pools, one)
	a.Need, a.Seq = r.led.vouch(ctx), highestSeq(rec.Calls)
	rep, err := r.run(ctx, 5*time.Second, "lost", r.inst, a)
	if err != nil {
		return fmt.Errorf("start recovery: %w", err)
	}
	if rep.Started {
		r.opts.Logger.Warn("the limiter lost data: metered calls wait until every ledger that spent in the window has put its calls back, or the window and the day have passed",
			"reason", why, "need", strings.Join(a.Need, ","), "vouched", len(a.Need) > 0)
		if len(a.Need) == 0 {
			r.opts.Logger.Warn(UndecidedText(time.Time{}))
		}
	}
	_, err = r.refill(ctx, r.opts.ID, rec)
	return err
}

// noConf handles a limiter without configuration for this quota key: lost
// data when this ledger has calls within the pools' span, else a key that
// was never created.
func (r *Redis) noConf(ctx context.Context) error {
	if ok, err := r.spent(ctx); err != nil || !ok {
		return cmp.Or(err, r.notApplied())
	}
	return r.recover(ctx, "the limiter holds no configuration for this quota key, and this ledger has calls in its span")
}

// spent reports whether this ledger was admitted calls within the pools'
// span.
func (r *Redis) spent(ctx context.Context) (bool, error) {
	rec, err := r.opts.recall(ctx)
	if err != nil {
		return false, err
	}
	since := r.opts.Now().Add(-r.opts.Costs.Span())
	mark, _, _ := r.led.clockArgs()
	if ms, _, err := parseID(mark); err == nil && ms > since.UnixMilli() {
		return true, nil
	}
	return slices.ContainsFunc(rec.Calls, func(c ingest.Call) bool { return c.At.After(since) }), nil
}

// Refill puts ledger calls (metered and unmetered) and blocks back; calls
// already there are skipped. It also tells a recovery that this ledger has
// put its calls back.
func (r *Redis) Refill(ctx context.Context, rec ingest.Recalled) (int, error) {
	r.led.recallMu.Lock()
	defer r.led.recallMu.Unlock()
	return r.refill(ctx, r.opts.ID, rec)
}

func (r *Redis) refill(ctx context.Context, ledger string, rec ingest.Recalled) (int, error) {
	a := r.base(r.opts.Costs.Pools, one)
	a.Ledger = ledger
	if ledger == r.opts.ID {
		a.Mark, _, _ = r.led.clockArgs()
		a.Every, a.Idle = r.led.cadence(rec.Calls)
	}
	return r.refillWith(ctx, a, rec, ledger == r.opts.ID)
}

// refillWith runs refill with a, given rec's calls and blocks; marks
// moves a's mark to the ledger's latest metered call.
func (r *Redis) refillWith(ctx context.Context, a *args, rec ingest.Recalled, marks bool) (int, error) {
	byPool := map[string]int{}
	for i, p := range a.Pools {
		byPool[p.Name] = i
	}
	for _, c := range refillable(r.opts.Logger, r.opts.QuotaKey, rec.Calls) {
		ms, seq, _ := logID(c.ID)
		if !c.Unmetered && marks {
			a.Mark = laterID(a.Mark, c.ID)
		}
		for _, ch := range c.Charges {
			if i, ok := byPool[ch.Pool]; ok && ch.Units > 0 {
				a.Pools[i].Calls = append(a.Pools[i].Calls, [2]any{fmt.Sprintf("%d-%d", ms, seq), ch.Units})
			}
		}
	}
	for _, b := range rec.Blocks {
		if i, ok := byPool[b.Pool]; ok && (b.QuotaKey == "" || b.QuotaKey == r.opts.QuotaKey) {
			a.Pools[i].Block = max(a.Pools[i].Block, b.Until.UnixMilli())
		}
	}
	rep, err := r.run(ctx, SlowestCall, "refill", r.inst, a)
	if err != nil {
		return 0, fmt.Errorf("refill: %w", err)
	}
	if rep.N > 0 {
		r.opts.Logger.Info("refilled the limiter from the ledger", ingest.LogCalls, rep.N)
	}
	return rep.N, nil
}

// cadence is how often this ledger contacts the limiter, for a recovery's
// quiet period: twice the Beat for a process that has heartbeat since its
// last call (a heartbeat may come late), else the longest gap between its
// calls within the span; idle asks the script to count the time since its
// last call too, the gap this very run ends. A cron run heartbeats too,
// but only from its start: until its first call, the ledger's last call
// is the previous run's, and the gap since then is its cadence.
func (v *ledgerView) cadence(calls []ingest.Call) (every int64, idle bool) {
	if v.looked.Load() {
		return 2 * v.opts.Beat.Milliseconds(), false
	}
	since := v.opts.Now().Add(-v.opts.Costs.Span()).UnixMilli()
	var at []int64
	for _, c := range calls {
		if ms, _, err := parseID(c.ID); err == nil && !c.Unmetered && ms > since {
			at = append(at, ms)
		}
	}
	slices.Sort(at)
	for i := 1; i < len(at); i++ {
		every = max(every, at[i]-at[i-1])
	}
	return every, true
}

// Heartbeat looks at the limiter between calls: a recovery that waits for
// this ledger, or this ledger's calls gone missing, are handled as a spend
// would, so that an idle daemon does not keep the others waiting. Daemons
// call it every Beat (Run).
func (r *Redis) Heartbeat(ctx context.Context) error {
	if err := r.led.load(ctx, r); err != nil {
		return err
	}
	// The mark is read before the limiter: a call admitted meanwhile is
	// newer than what the read shows, not missing from it.
	mark, _, _ := r.led.clockArgs()
	st, err := r.Status(ctx)
	if errors.Is(err, errLost) {
		return r.recover(ctx, err.Error())
	}
	if err != nil {
		if Unreached(err) || neverSent(err) {
			r.fail.unreachable(err)
		}
		return fmt.Errorf("heartbeat: %w", err)
	}
	r.answered(ctx)
	me := r.opts.ID
	if st.Recovering && slices.Contains(st.Need, me) && !slices.Contains(st.Done, me) {
		return r.recover(ctx, "a recovery waits for this ledger")
	}
	if r.led.missing(st, mark, r.opts.Now()) {
		return r.recover(ctx, "calls of this ledger are missing")
	}
	if !st.Recovering {
		r.led.keepCopy(ctx, st.At, st.Ledgers)
	}
	return nil
}

// missing reports whether the limiter lacks this ledger's calls up to
// mark within the span: then its list of ledgers is no copy to keep.
func (v *ledgerView) missing(st Status, mark string, now time.Time) bool {
	if ms, _, err := parseID(mark); err != nil || ms <= now.Add(-v.opts.Costs.Span()).UnixMilli() {
		return false
	}
	for _, l := range st.Ledgers {
		if l.Ledger == v.opts.ID && laterID(l.Mark, mark) == l.Mark {
			return false
		}
	}
	return true
}

// Run heartbeats every Beat until ctx is done.
func (r *Redis) Run(ctx context.Context) {
	r.led.beating.Store(true)
	t := ingest.NewTicker(r.opts.Beat)
	defer t.Stop()
	for {
		if err := r.Heartbeat(ctx); err != nil && ctx.Err() == nil {
			r.opts.Logger.Debug("quota heartbeat", ingest.LogErr, err)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// KeepLedgers copies the limiter's list of ledgers into this ledger's
// notes now, as a decision does once a Beat: a process that ends keeps
// the peers that spent since its last copy.
func (r *Redis) KeepLedgers(ctx context.Context) error {
	st, err := r.Status(ctx)
	if err != nil || st.Recovering {
		return err
	}
	r.led.keepCopy(ctx, st.At, st.Ledgers)
	return nil
}

// ErrLostLedgers: the limiter's list of ledgers may lack some that spent
// in the window.
var ErrLostLedgers = errors.New("the limiter lost data (a restart without persistence, a rollback, a recovery): " +
	"its list of ledgers may lack some that spent in the window")

// LearnLedgers is KeepLedgers for a host leaving the key, which learns
// from the list every ledger that spent in the window: ErrLostLedgers,
// copying nothing, while the limiter recovers or when it lacks a ledger
// this ledger's copy names as having spent within the span.
func (r *Redis) LearnLedgers(ctx context.Context) error {
	st, err := r.Status(ctx)
	if err != nil {
		return err
	}
	if st.Recovering {
		return ErrLostLedgers
	}
	var old ledgerCopy
	raw, err := r.opts.Notes.Noted(ctx, r.led.noteName("ledgers"))
	if err != nil {
		return err
	}
	if raw != "" {
		if err := json.Unmarshal([]byte(raw), &old); err != nil {
			return fmt.Errorf("the copy of the limiter's ledgers: %w", err)
		}
	}
	for _, o := range old.Ledgers {
		if o.At > st.At-r.opts.Costs.Span().Milliseconds() && !slices.ContainsFunc(st.Ledgers, func(l LedgerSeen) bool { return l.Ledger == o.Ledger }) {
			return fmt.Errorf("%w: it does not list ledger %s, which spent there in the window", ErrLostLedgers, o.Ledger)
		}
	}
	r.led.keepCopy(ctx, st.At, st.Ledgers)
	return nil
}

// NotedPeers are the ledgers other than self that the copy of a Redis
// limiter's list of ledgers in notes (kept while this database's limiter
// was Redis) names as having spent within span of now: the hosts whose
// calls of the window this database's ledger does not hold.
func NotedPeers(ctx context.Context, notes Notebook, quotaKey, self string, now time.Time, span time.Duration) ([]LedgerSeen, error) {
	raw, err := notes.Noted(ctx, "ledgers:"+quotaKey)
	if err != nil || raw == "" {
		return nil, err
	}
	var c ledgerCopy
	if err := json.Unmarshal([]byte(raw), &c); err != nil {
		return nil, fmt.Errorf("the copy of the limiter's ledgers: %w", err)
	}
	var out []LedgerSeen
	for _, l := range c.Ledgers {
		if l.Ledger != self && l.At > now.Add(-span).UnixMilli() {
			out = append(out, l)
		}
	}
	return out, nil
}

package quota

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/ingestworks/ingest"
)

// The upstream's Date header is a third clock, which no host of ours
// controls, and the quota's day is its day. The boot clock guard cannot
// tell a new host or boot whose clocks are a day ahead from a day that
// passed; the upstream's time can: a decision is taken only when its time
// agrees, within Options.Guard, with the upstream's last known time carried
// on by the boot clock. A boot that has not seen it yet asks first, by a
// request no quota is charged for (it carries no key).

// upstreamNote is the ledger note that keeps the upstream's last known
// time, for every process of the ledger and for the next boot.
const upstreamNote = "upstream-clock"

// UpstreamSeen is one reading of the upstream's clock.
type UpstreamSeen struct {
	At    time.Time     `json:"at"`    // the upstream's time: its Date header
	Local time.Time     `json:"local"` // this worker's wall clock when the answer came
	Boot  string        `json:"boot"`  // the boot it was read on
	Up    time.Duration `json:"up"`    // the time since that boot then
}

// Skew is how far the upstream's clock is ahead of this worker's; the
// Date header has whole seconds, so a second either way is noise.
func (s UpstreamSeen) Skew() time.Duration { return s.At.Sub(s.Local) }

// UpstreamOptions configure an UpstreamClock.
type UpstreamOptions struct {
	Notes Notebook // the ledger's, for the last reading; nil: in memory
	// Ask reads the upstream's time by a request no quota is charged for;
	// nil never asks.
	Ask func(ctx context.Context) (time.Time, error)
	// Uptime is this worker's boot clock; nil means the kernel's. Tests
	// move it.
	Uptime func() (boot string, since time.Duration, ok bool)
}

// UpstreamClock keeps the upstream's last known time and tells the limiter
// what the upstream's clock reads now.
type UpstreamClock struct {
	opts   UpstreamOptions
	local  ingest.Clock // this worker's
	mu     sync.Mutex
	last   UpstreamSeen
	loaded bool
	failed time.Time // when asking the upstream last failed
	noted  time.Time // when a reading was last written to the ledger
	// fresh says last was asked of the upstream by this process, not read
	// from the ledger; failErr is why the last question failed.
	fresh   bool
	failErr error
	// rechecked is when a refusal last asked the upstream again.
	rechecked time.Time
	// refused is why the last decision was refused on the clock; nil
	// once a decision is taken again.
	refused error
}

const (
	// noteEvery spaces the ledger's writes of the readings: the guard
	// carries one on by the boot clock, so a newer one on the same boot
	// adds little, and every response must not cost a write.
	noteEvery = time.Minute
	// askAgain spaces the questions to an upstream that did not answer.
	askAgain = time.Minute
)

// NewUpstreamClock keeps the upstream's clock against local, this
// worker's, which is required: the skew is the one the limiter's
// neighbours read.
func NewUpstreamClock(local ingest.Clock, opts UpstreamOptions) *UpstreamClock {
	if local == nil {
		panic("quota: NewUpstreamClock: the worker's clock is required")
	}
	opts.Notes = cmp.Or[Notebook](opts.Notes, &memNotes{})
	if opts.Uptime == nil {
		opts.Uptime = kernelUptime
	}
	return &UpstreamClock{opts: opts, local: local}
}

// Saw takes in the upstream's time from a response that just came, and
// keeps it in the ledger.
func (c *UpstreamClock) Saw(ctx context.Context, at time.Time) error {
	s := UpstreamSeen{At: at.UTC(), Local: c.local.Now().UTC()}
	s.Boot, s.Up, _ = c.opts.Uptime()
	c.mu.Lock()
	due := c.noted.IsZero() || s.Local.Sub(c.noted) >= noteEvery || s.Local.Before(c.noted) || c.last.Boot != s.Boot
	c.last, c.loaded = s, true
	if due {
		c.noted = s.Local
	}
	c.mu.Unlock()
	if !due {
		return nil
	}
	b, _ := json.Marshal(s)
	if err := c.opts.Notes.Note(ctx, upstreamNote, string(b)); err != nil {
		return fmt.Errorf("keep the upstream's time: %w", err)
	}
	return nil
}

// Heard is the upstream client's OnDate for c: each response's time is
// taken in (Saw) even when its call's context has ended, for the reading
// is as good; one the ledger would not keep is a warning on log, never
// the call's failure.
func (c *UpstreamClock) Heard(log *slog.Logger) func(context.Context, time.Time) {
	return func(ctx context.Context, at time.Time) {
		if err := c.Saw(context.WithoutCancel(ctx), at); err != nil {
			log.Warn("keep the upstream's time in the ledger", ingest.LogErr, err)
		}
	}
}

// Skew is the upstream's clock minus this host's at the last reading (ok
// false: never read).
func (c *UpstreamClock) Skew(ctx context.Context) (skew time.Duration, ok bool, err error) {
	seen, ok, err := c.Last(ctx)
	return seen.Skew(), ok, err
}

// Last is the upstream's last known time, as this process or any other of
// the ledger saw it (ok false: never).
func (c *UpstreamClock) Last(ctx context.Context) (s UpstreamSeen, ok bool, err error) {
	raw, err := c.opts.Notes.Noted(ctx, upstreamNote)
	if err != nil {
		return s, false, fmt.Errorf("read the upstream's time: %w", err)
	}
	if raw == "" {
		return s, false, nil
	}
	if err := json.Unmarshal([]byte(raw), &s); err != nil {
		return s, false, fmt.Errorf("read the upstream's time %q: %w", raw, err)
	}
	c.mu.Lock()
	if !c.loaded || s.At.After(c.last.At) {
		c.last, c.loaded, c.fresh = s, true, false
	}
	s = c.last
	c.mu.Unlock()
	return s, true, nil
}

// Prepare reads the upstream's time when no reading of this boot is at
// hand (the ledger's, else the free request, at most once a minute while
// it fails), so that the decision after it finds one without asking: the
// client runs it before a call's delivery bound starts (fetch's
// Options.Prepare), and the request keeps its own budget.
func (c *UpstreamClock) Prepare(ctx context.Context) {
	_, _ = c.expect(ctx)
}

// expect is what the upstream's clock reads now, in Unix ms: its last
// known time carried on by the boot clock; zero when there is no boot
// clock or the upstream could not be asked.
func (c *UpstreamClock) expect(ctx context.Context) (int64, error) {
	boot, since, ok := c.opts.Uptime()
	if !ok {
		return 0, nil
	}
	c.mu.Lock()
	s, seen := c.last, c.loaded
	c.mu.Unlock()
	var err error
	if !seen || s.Boot != boot {
		if s, seen, err = c.Last(ctx); err != nil {
			return 0, err
		}
	}
	if !seen || s.Boot != boot {
		if s, ok = c.ask(ctx); !ok {
			return 0, nil
		}
		_, since, _ = c.opts.Uptime()
	}
	return s.At.Add(since - s.Up).UnixMilli(), nil
}

// ask reads the upstream's time by the free request and keeps it.
func (c *UpstreamClock) ask(ctx context.Context) (UpstreamSeen, bool) {
	c.mu.Lock()
	recent := !c.failed.IsZero() && c.local.Now().Sub(c.failed) < askAgain
	c.mu.Unlock()
	if c.opts.Ask == nil || recent {
		return UpstreamSeen{}, false
	}
	at, err := c.opts.Ask(ctx)
	if err == nil && at.IsZero() {
		err = errors.New("its answer has no Date")
	}
	if err != nil {
		c.mu.Lock()
		c.failed, c.failErr = c.local.Now(), err
		c.mu.Unlock()
		return UpstreamSeen{}, false
	}
	c.mu.Lock()
	c.noted = time.Time{} // a reading asked for is always kept
	c.mu.Unlock()
	if err := c.Saw(ctx, at); err != nil {
		return UpstreamSeen{}, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.fresh, c.failErr = true, nil
	return c.last, true
}

// Recheck asks the upstream's time again when a decision was refused on
// the clock, so that a refusal resting on a recorded reading is lifted by
// evidence when that reading was wrong: a caching proxy's old Date, met
// once, must not block the ledger's hosts for good. It says whether a new
// reading came, on which the decision is to be taken again. Asked at most
// once a minute, so a clock that is really wrong costs one free request a
// minute, not one a call.
func (c *UpstreamClock) Recheck(ctx context.Context) bool {
	c.mu.Lock()
	recent := !c.rechecked.IsZero() && c.local.Now().Sub(c.rechecked) < askAgain && c.local.Now().After(c.rechecked)
	if !recent {
		c.rechecked, c.failed = c.local.Now(), time.Time{}
	}
	c.mu.Unlock()
	if recent {
		return false
	}
	_, ok := c.ask(ctx)
	return ok
}

// decided keeps whether the decision that ended in err was refused on the
// clock: a refusal is kept until a decision is taken, and an error of
// another kind (the limiter not answering) says nothing of the clock.
func (c *UpstreamClock) decided(err error) {
	if err != nil && !errors.Is(err, ErrClockSkew) {
		return
	}
	c.mu.Lock()
	c.refused = err
	c.mu.Unlock()
}

// Refusing is why decisions are refused on the clock (ErrClockSkew, with
// which clock disagrees and what to do), from the last decision asked
// until one is taken again; nil while they are taken. /readyz reads it.
func (c *UpstreamClock) Refusing(context.Context) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.refused
}

// Forget removes the recorded reading of the upstream's clock from the
// ledger: the next decision asks the upstream again (ForgetCommand).
func (c *UpstreamClock) Forget(ctx context.Context) error {
	if err := c.opts.Notes.Note(ctx, upstreamNote, ""); err != nil {
		return fmt.Errorf("forget the upstream's time: %w", err)
	}
	c.mu.Lock()
	c.last, c.loaded, c.fresh, c.noted = UpstreamSeen{}, false, false, time.Time{}
	c.mu.Unlock()
	return nil
}

// ErrClockSkew: the limiter's clock disagrees with the upstream's by more
// than the guard. It is an ErrUnavailable: jobs stop as they do when the
// limiter cannot be asked.
var ErrClockSkew = ingest.ErrClockSkew

// ForgetCommand lifts a recorded reading of the upstream's clock; an error
// that rests on one names it.
const ForgetCommand = "ingest quota clock --forget"

// skewError says which clock disagrees, by how much, and what the upstream's
// time it was compared with rests on.
func (o settings) skewError(clock string, now, upstream int64) error {
	d := time.Duration(now-upstream) * time.Millisecond
	way := "ahead of"
	if d < 0 {
		d, way = -d, "behind"
	}
	why := "set that clock right (NTP)"
	if o.Upstream != nil {
		why = o.Upstream.verdict(clock, now, o.Guard)
	}
	return fmt.Errorf("%w: %s reads %s, %s %s the upstream's: nothing is decided on a wrong day; %s",
		ErrClockSkew, clock, time.UnixMilli(now).UTC().Format(time.RFC3339), d.Round(time.Second), way, why)
}

// verdict says what the upstream's time rests on, which clock is wrong
// and how that is known: a reading asked by this process is the upstream's word
// against the limiter's clock and this host's; a recorded one that could
// not be asked again may be the wrong one (a caching proxy's Date), and
// ForgetCommand lifts it.
func (c *UpstreamClock) verdict(clock string, now int64, guard time.Duration) string {
	c.mu.Lock()
	s, fresh, failed := c.last, c.fresh, c.failErr
	c.mu.Unlock()
	if !fresh {
		why := "asking it again failed"
		if failed != nil {
			why += ": " + failed.Error()
		}
		return fmt.Sprintf("the upstream's time is its Date header recorded at %s (skew %s) carried on by this host's boot clock, and %s; "+
			"if that reading was wrong (a proxy's cached Date), `%s` lifts it, `ingest quota clock` shows it",
			s.Local.UTC().Format(time.RFC3339), s.Skew().Round(time.Second), why, ForgetCommand)
	}
	// The reading may be up to a minute old (askAgain): say its age, not "now".
	asked := fmt.Sprintf("the upstream's Date header, read %s ago (asked at no quota cost by %s, at most once a minute)",
		max(c.local.Now().Sub(s.Local), 0).Round(time.Second), DateRequest)
	host := c.local.Now().UnixMilli()
	upstream := s.At.Add(c.local.Now().Sub(s.Local)).UnixMilli()
	near := func(a, b int64) bool { return a-b <= guard.Milliseconds() && b-a <= guard.Milliseconds() }
	switch {
	case clock != "this host's clock" && near(host, upstream):
		return fmt.Sprintf("%s says so, and this host's clock agrees with it: %s is wrong; set the clock of the limiter's server right (NTP)", asked, clock)
	case clock != "this host's clock" && !near(host, now):
		return fmt.Sprintf("%s says so, and this host's clock disagrees with both: set the clocks right (NTP)", asked)
	default:
		return fmt.Sprintf("%s says so: this host's clock is wrong, set it right (NTP); "+
			"unless YOUTUBE_ENDPOINT is a proxy that answers with a cached Date, which `ingest quota clock` shows", asked)
	}
}

// DateRequest is the request the upstream's time is asked by: the API's
// discovery document, which carries Date like every answer of Google's
// front end and is metered against no project's quota.
const DateRequest = "GET discovery/v1/apis/youtube/v3/rest on the endpoint's host"

// upstreamAt is the upstream's time now for a decision, in Unix ms; zero
// for none.
func (o settings) upstreamAt(ctx context.Context) (int64, error) {
	if o.Upstream == nil {
		return 0, nil
	}
	return o.Upstream.expect(ctx)
}

// agrees checks a decision's time against the upstream's (zero: none).
func (o settings) agrees(clock string, now, upstream int64) error {
	if upstream > 0 && (now-upstream > o.Guard.Milliseconds() || upstream-now > o.Guard.Milliseconds()) {
		return o.skewError(clock, now, upstream)
	}
	return nil
}

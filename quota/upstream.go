package quota

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"time"
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
	// Now and Uptime: this worker's wall clock and its boot clock; nil
	// means time.Now and the kernel's. Tests move them.
	Now    func() time.Time
	Uptime func() (boot string, since time.Duration, ok bool)
}

// UpstreamClock keeps the upstream's last known time and tells the limiter
// what the upstream's clock reads now.
type UpstreamClock struct {
	opts   UpstreamOptions
	mu     sync.Mutex
	last   UpstreamSeen
	loaded bool
	failed time.Time // when asking the upstream last failed
	noted  time.Time // when a reading was last written to the ledger
}

const (
	// noteEvery spaces the ledger's writes of the readings: the guard
	// carries one on by the boot clock, so a newer one on the same boot
	// adds little, and every response must not cost a write.
	noteEvery = time.Minute
	// askAgain spaces the questions to an upstream that did not answer.
	askAgain = time.Minute
)

func NewUpstreamClock(opts UpstreamOptions) *UpstreamClock {
	opts.Notes = cmp.Or[Notebook](opts.Notes, &memNotes{})
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Uptime == nil {
		opts.Uptime = kernelUptime
	}
	return &UpstreamClock{opts: opts}
}

// Saw takes in the upstream's time from a response that just came, and
// keeps it in the ledger.
func (c *UpstreamClock) Saw(ctx context.Context, at time.Time) error {
	s := UpstreamSeen{At: at.UTC(), Local: c.opts.Now().UTC()}
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
		c.last, c.loaded = s, true
	}
	s = c.last
	c.mu.Unlock()
	return s, true, nil
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
	recent := !c.failed.IsZero() && c.opts.Now().Sub(c.failed) < askAgain
	c.mu.Unlock()
	if c.opts.Ask == nil || recent {
		return UpstreamSeen{}, false
	}
	at, err := c.opts.Ask(ctx)
	if err != nil || at.IsZero() {
		c.mu.Lock()
		c.failed = c.opts.Now()
		c.mu.Unlock()
		return UpstreamSeen{}, false
	}
	if err := c.Saw(ctx, at); err != nil {
		return UpstreamSeen{}, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.last, true
}

// ErrClockSkew: the limiter's clock disagrees with the upstream's by more
// than the guard. It is an ErrUnavailable: jobs stop as they do when the
// limiter cannot be asked.
var ErrClockSkew = fmt.Errorf("%w: the limiter's clock disagrees with the upstream's", ErrUnavailable)

func skewError(clock string, now, upstream int64) error {
	d := time.Duration(now-upstream) * time.Millisecond
	way := "ahead of"
	if d < 0 {
		d, way = -d, "behind"
	}
	return fmt.Errorf("%w: %s reads %s, %s %s the upstream's (its Date header, carried on by this host's boot clock): nothing is decided on a wrong day; set that clock right (NTP)",
		ErrClockSkew, clock, time.UnixMilli(now).UTC().Format(time.RFC3339), d.Round(time.Second), way)
}

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
		return skewError(clock, now, upstream)
	}
	return nil
}

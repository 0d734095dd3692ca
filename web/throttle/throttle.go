package throttle

import (
	"net/http"
	"net/netip"
	"strconv"
	"sync"
	"time"

	"github.com/ingestworks/ingest"
)

// limits are how fast the access token may be guessed (docs/reference/api/limits.md,
// "Failed sign-ins"): perClient failures from one address within window
// before its attempts wait; each wait in a row doubles, up to longest,
// and is forgiven after longest without a failure. global failures from
// every address together within window are logged, never waited on: the
// token's strength (CheckToken) is what a guess spread over many
// addresses meets. clients bounds the addresses kept.
type limits struct {
	perClient, global int
	window, longest   time.Duration
	clients           int
}

// defaultLimits: ten wrong tokens a minute from one address; a hundred from
// all of them is worth a line in the log.
var defaultLimits = limits{perClient: 10, global: 100, window: time.Minute, longest: time.Hour, clients: 4096}

// strikes are the recent failures of one address, or of all of them: the
// times of the last few (a ring as long as the limit, so that "n failures
// within a window" is exact), and the wait they started.
type strikes struct {
	at    []time.Time
	next  int
	until time.Time // attempts wait until then
	waits int       // waits in a row: the next one is window << waits

	// What the log has not said yet, and when it last spoke (at most once
	// a window).
	rejected, throttled int
	logged              time.Time
}

func newStrikes(limit int) *strikes { return &strikes{at: make([]time.Time, limit)} }

// last is the time of the latest failure, zero when there was none.
func (k *strikes) last() time.Time { return k.at[(k.next+len(k.at)-1)%len(k.at)] }

// fail records a failure at now and starts a wait when it is the limit's
// within the window.
func (k *strikes) fail(now time.Time, l limits) {
	if k.waits > 0 && now.Sub(later(k.last(), k.until)) >= l.longest {
		k.waits = 0 // forgiven: no failure for the longest wait since the last one
	}
	k.at[k.next] = now
	k.next = (k.next + 1) % len(k.at)
	oldest := k.at[k.next]
	if oldest.IsZero() || now.Sub(oldest) >= l.window {
		return
	}
	wait := l.longest
	if k.waits < 16 && l.window<<k.waits < l.longest {
		wait = l.window << k.waits
	}
	k.waits++
	k.until = now.Add(wait)
	// After the wait, a full limit of new failures before the next one;
	// the latest is kept for last (it is a window old by then).
	clear(k.at)
	k.at[(k.next+len(k.at)-1)%len(k.at)] = now
}

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// Throttle slows the guessing of the access token: it counts the failed
// attempts by client address, and while an address is over its limit its
// attempts wait without the token being compared at all, so a right
// guess is no more use than a wrong one until the wait is over.
//
// Only the address that guessed waits: the right token from any other
// one, a fresh one, or any after a restart, is always compared. A guess
// spread over many addresses is not slowed as a whole: it meets a token
// of at least signin.MinTokenBits, beyond reach at any rate a server answers.
//
// Its memory is bounded: at most limits.clients addresses, and a new one
// only by a failure that was compared; an address that waits is the last
// to be dropped for room.
type Throttle struct {
	mu      sync.Mutex
	clock   ingest.Clock
	l       limits
	all     *strikes // every address's failures: for the log alone
	clients map[string]*strikes
}

// New is a throttle of the access token's guesses on clock, at the
// limits the docs promise.
func New(clock ingest.Clock) *Throttle { return newThrottle(clock, defaultLimits) }

func newThrottle(clock ingest.Clock, l limits) *Throttle {
	return &Throttle{clock: clock, l: l, all: newStrikes(l.global), clients: map[string]*strikes{}}
}

// Verdict is what became of one attempt.
type Verdict struct {
	OK bool
	// Wait > 0: the token was not compared; try again after Wait.
	Wait time.Duration
	// Say and SayAll, when not nil, are what the log should say now of
	// the address and of every address together (each at most once a
	// window).
	Say, SayAll *Tally
}

// Tally sums up an address's refused attempts since its last log line.
type Tally struct {
	Key                 string // "" for every address together
	Rejected, Throttled int
	Wait                time.Duration
}

// Try runs check, the comparison of a token tried from the address key,
// unless that address must wait; a failed check counts against it (a
// right one forgives nothing: the next wait still doubles).
func (t *Throttle) Try(key string, check func() bool) Verdict {
	t.mu.Lock()
	defer t.mu.Unlock()
	now := t.clock.Now()
	k := t.clients[key]
	if v, waiting := t.waiting(k, now); waiting {
		k.throttled++
		v.Say = t.speak(k, key, now)
		return v
	}
	if check() {
		return Verdict{OK: true}
	}
	if k == nil {
		k = t.add(key, now)
	}
	k.fail(now, t.l)
	k.rejected++
	before := t.all.until
	t.all.fail(now, t.l)
	t.all.rejected++
	v := Verdict{Say: t.speak(k, key, now)}
	if t.all.until.After(before) {
		v.SayAll = t.speak(t.all, "", now)
	}
	return v
}

// waiting is the wait of an address (k its record, nil when it has none).
func (t *Throttle) waiting(k *strikes, now time.Time) (Verdict, bool) {
	var v Verdict
	if k != nil && now.Before(k.until) {
		v.Wait = k.until.Sub(now)
	}
	return v, v.Wait > 0
}

// Peek is the wait an attempt from key would meet now, without one.
func (t *Throttle) Peek(key string) Verdict {
	t.mu.Lock()
	defer t.mu.Unlock()
	now := t.clock.Now()
	v, _ := t.waiting(t.clients[key], now)
	return v
}

// speak returns what the log should say of k now, once a window at most,
// and starts a new sum.
func (t *Throttle) speak(k *strikes, key string, now time.Time) *Tally {
	if !k.logged.IsZero() && now.Sub(k.logged) < t.l.window {
		return nil
	}
	r := &Tally{Key: key, Rejected: k.rejected, Throttled: k.throttled, Wait: max(k.until.Sub(now), 0)}
	k.logged, k.rejected, k.throttled = now, 0, 0
	return r
}

// add makes the record of key, dropping another when the table is full:
// the one idle longest among those that do not wait, else the one whose
// wait ends first.
func (t *Throttle) add(key string, now time.Time) *strikes {
	if len(t.clients) >= t.l.clients {
		var victim string
		var best *strikes
		for name, k := range t.clients {
			if best == nil || evictBefore(k, best, now) {
				victim, best = name, k
			}
		}
		delete(t.clients, victim)
	}
	k := newStrikes(t.l.perClient)
	t.clients[key] = k
	return k
}

// evictBefore reports whether a is a better record to drop than b: one
// that does not wait before one that does, then the older.
func evictBefore(a, b *strikes, now time.Time) bool {
	aw, bw := now.Before(a.until), now.Before(b.until)
	if aw != bw {
		return !aw
	}
	if aw {
		return a.until.Before(b.until)
	}
	return a.last().Before(b.last())
}

// ClientKey is what an address is counted under: an IPv4 address itself,
// an IPv6 one by its /64, the block a single host is usually given (so
// that one host cannot take a fresh count per address).
func ClientKey(addr string) string {
	a, err := netip.ParseAddr(addr)
	if err != nil {
		return addr
	}
	if a = a.Unmap(); a.Is4() {
		return a.String()
	}
	p, _ := a.Prefix(64)
	return p.String()
}

// SetRetryAfter writes the wait in whole seconds, rounded up.
func SetRetryAfter(w http.ResponseWriter, wait time.Duration) {
	w.Header().Set("Retry-After", strconv.FormatInt(Seconds(wait), 10))
}

// Seconds rounds up to whole seconds, at least 1 for any wait: a
// client told 0 would retry at once and be refused again.
func Seconds(d time.Duration) int64 {
	if d <= 0 {
		return 0
	}
	return int64((d + time.Second - 1) / time.Second)
}

package web

import (
	"net/http"
	"net/netip"
	"strconv"
	"sync"
	"time"
)

// limits are how fast the access token may be guessed (docs/api.md,
// "Failed sign-ins"): perClient failures from one address within window,
// global from every address together, before their attempts wait; each
// wait in a row doubles, up to longest, and is forgiven after longest
// without a failure. An address that showed the right token within known
// is spared the global wait (never its own). clients bounds the addresses
// kept, of each kind.
type limits struct {
	perClient, global int
	window, longest   time.Duration
	known             time.Duration
	clients           int
}

// defaultLimits: ten wrong tokens a minute from one address, a hundred from
// all of them; the operator's own addresses of the last day go on.
var defaultLimits = limits{perClient: 10, global: 100, window: time.Minute, longest: time.Hour, known: 24 * time.Hour, clients: 4096}

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

// throttle slows the guessing of the access token: it counts the failed
// attempts by client address and in all, and while either is over its
// limit, attempts wait without the token being compared at all, so a
// right guess is no more use than a wrong one until the wait is over.
//
// The global wait holds back only the addresses that have not shown the
// right token lately (known): a guess spread over many addresses cannot
// lock the operator out of the addresses the operator uses, and since an
// address's own wait still holds, a guesser learns nothing from it.
//
// Its memory is bounded: at most limits.clients addresses, and a new one
// only by a failure that was compared, which the global limit slows as
// much as any; an address that waits is the last to be dropped for room.
// The known addresses are bounded alike, and only the right token adds
// one.
type throttle struct {
	mu      sync.Mutex
	now     func() time.Time
	l       limits
	all     *strikes
	clients map[string]*strikes
	known   map[string]time.Time // address -> when it last showed the right token
}

func newThrottle(now func() time.Time, l limits) *throttle {
	return &throttle{now: now, l: l, all: newStrikes(l.global), clients: map[string]*strikes{}, known: map[string]time.Time{}}
}

// verdict is what became of one attempt.
type verdict struct {
	ok bool
	// wait > 0: the token was not compared; try again after wait. global
	// says it was every address's wait, not this one's.
	wait   time.Duration
	global bool
	// say and sayAll, when not nil, are what the log should say now of
	// the address and of every address together (each at most once a
	// window).
	say, sayAll *tally
}

// tally sums up an address's refused attempts since its last log line.
type tally struct {
	key                 string // "" for every address together
	rejected, throttled int
	wait                time.Duration
}

// try runs check, the comparison of a token tried from the address key,
// unless that address or every address must wait; a failed check counts
// against both.
func (t *throttle) try(key string, check func() bool) verdict {
	t.mu.Lock()
	defer t.mu.Unlock()
	now := t.now()
	k := t.clients[key]
	if v, waiting := t.waiting(key, k, now); waiting {
		if k == nil || v.global {
			t.all.throttled++
			v.sayAll = t.speak(t.all, "", now)
		} else {
			k.throttled++
			v.say = t.speak(k, key, now)
		}
		return v
	}
	if check() {
		t.remember(key, now)
		return verdict{ok: true}
	}
	if k == nil {
		k = t.add(key, now)
	}
	k.fail(now, t.l)
	k.rejected++
	before := t.all.until
	t.all.fail(now, t.l)
	t.all.rejected++
	v := verdict{say: t.speak(k, key, now)}
	if t.all.until.After(before) {
		v.sayAll = t.speak(t.all, "", now)
	}
	return v
}

// waiting is the wait of the address key (k its record, nil when it has
// none) or, unless it showed the right token lately, of every address,
// whichever ends later.
func (t *throttle) waiting(key string, k *strikes, now time.Time) (verdict, bool) {
	var v verdict
	if k != nil && now.Before(k.until) {
		v.wait = k.until.Sub(now)
	}
	if g := t.all.until.Sub(now); g > v.wait && !t.isKnown(key, now) {
		v.wait, v.global = g, true
	}
	return v, v.wait > 0
}

// isKnown reports whether key showed the right token within l.known.
func (t *throttle) isKnown(key string, now time.Time) bool {
	at, ok := t.known[key]
	return ok && now.Sub(at) < t.l.known
}

// remember notes that key showed the right token at now, dropping the
// address that showed it longest ago when the table is full.
func (t *throttle) remember(key string, now time.Time) {
	if _, ok := t.known[key]; !ok && len(t.known) >= t.l.clients {
		var oldest string
		for name, at := range t.known {
			if oldest == "" || at.Before(t.known[oldest]) {
				oldest = name
			}
		}
		delete(t.known, oldest)
	}
	t.known[key] = now
}

// peek is the wait an attempt from key would meet now, without one.
func (t *throttle) peek(key string) verdict {
	t.mu.Lock()
	defer t.mu.Unlock()
	now := t.now()
	v, _ := t.waiting(key, t.clients[key], now)
	return v
}

// speak returns what the log should say of k now, once a window at most,
// and starts a new sum.
func (t *throttle) speak(k *strikes, key string, now time.Time) *tally {
	if !k.logged.IsZero() && now.Sub(k.logged) < t.l.window {
		return nil
	}
	r := &tally{key: key, rejected: k.rejected, throttled: k.throttled, wait: max(k.until.Sub(now), 0)}
	k.logged, k.rejected, k.throttled = now, 0, 0
	return r
}

// add makes the record of key, dropping another when the table is full:
// the one idle longest among those that do not wait, else the one whose
// wait ends first.
func (t *throttle) add(key string, now time.Time) *strikes {
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

// clientKey is what an address is counted under: an IPv4 address itself,
// an IPv6 one by its /64, the block a single host is usually given (so
// that one host cannot take a fresh count per address).
func clientKey(addr string) string {
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

// setRetryAfter writes the wait in whole seconds, rounded up.
func setRetryAfter(w http.ResponseWriter, wait time.Duration) {
	w.Header().Set("Retry-After", strconv.FormatInt(ceilSeconds(wait), 10))
}

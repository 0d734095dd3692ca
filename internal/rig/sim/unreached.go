package sim

import (
	"fmt"
	"net"
	"net/http"
	"os"
	"slices"
	"strings"
	"syscall"
	"time"
)

// The upstream cut off: for cutFor from the start of each of the nemesis's
// bursts of failures, every request, keyed or not, is refused at dial, as a
// partition or a firewall refuses it: it never reaches the upstream, which
// charges nothing for it (docs/operations/faults.md, "A host cut off from a
// peer"). The client tries it again as it tries a 503, and gives back the
// units the limiter took for it; the upstream's time asked meanwhile gets
// no answer, and is asked again a minute later.

// cutFor is how long the upstream is cut off at a burst's start: longer
// than a stagger step of the charts at the default regions, so that a
// chart's pass meets it.
const cutFor = 10 * time.Minute

// CutOff has every request refused at dial for d from now.
func (u *Upstream) CutOff(d time.Duration) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.cutOff = time.Now().Add(d)
}

// unreached refuses req at dial while the upstream is cut off, keeping a
// keyed one as a Call the fake never saw, and an ask of the upstream's
// time as asked.
func (u *Upstream) unreached(req *http.Request) error {
	u.mu.Lock()
	defer u.mu.Unlock()
	if !time.Now().Before(u.cutOff) {
		return nil
	}
	q := req.URL.Query()
	switch {
	case q.Get("key") != "":
		c := askedFor(req, q)
		c.At, c.Sent, c.Refused = time.Now(), time.Now(), true
		u.refused = append(u.refused, c)
	case strings.HasSuffix(req.URL.Path, "/discovery/v1/apis/youtube/v3/rest"):
		u.asks = append(u.asks, time.Now())
	}
	return &net.OpError{Op: "dial", Net: "tcp", Err: &os.SyscallError{Syscall: "connect", Err: syscall.ECONNREFUSED}}
}

// Refused is every keyed request refused at dial, in order.
func (u *Upstream) Refused() []Call {
	u.mu.Lock()
	defer u.mu.Unlock()
	return append([]Call(nil), u.refused...)
}

// cutOff: t is in a spell of the upstream cut off, or within retryWait
// after it, when the daemon says what it met.
func (h *History) cutOff(t time.Time) bool {
	var spans []Interval
	for _, s := range h.Unreachable {
		spans = append(spans, Interval{s.From, s.To.Add(retryWait)})
	}
	return within(spans, t)
}

// checkUnreachedGivenBack: a call refused at dial never reached the
// upstream, which charged nothing for it: neither does the ledger, which
// gives back the units the limiter took for it (docs/operations/faults.md:
// nothing charged for a call that never reached it). Each millisecond
// holds as many calls given back in the ledger as calls refused at dial
// then: a client that kept them spends the pool on calls never made.
func checkUnreachedGivenBack(h *History) []string {
	back := map[int64]int{}
	for _, e := range h.Ledger {
		if e.GivenBack && !e.Peer {
			back[e.At.UnixMilli()]++
		}
	}
	var kept []string
	for _, c := range h.Unreached {
		ms := c.At.UnixMilli()
		if back[ms] > 0 {
			back[ms]--
			continue
		}
		kept = append(kept, fmt.Sprintf("%s by the %s at %s", callKey(c), c.Worker, c.At.UTC().Format(time.RFC3339Nano)))
	}
	if len(kept) == 0 {
		return nil
	}
	return []string{fmt.Sprintf("%d of %d calls refused at dial, which never reached the upstream, were not given back in the ledger: %s",
		len(kept), len(h.Unreached), firstFew(kept))}
}

// withUnreached is the daemon's calls that reached the upstream and those
// refused at dial, in the order they were sent.
func (h *History) withUnreached() []Call {
	out := slices.Concat(h.Calls, h.Unreached)
	slices.SortStableFunc(out, func(a, b Call) int { return a.Sent.Compare(b.Sent) })
	return out
}

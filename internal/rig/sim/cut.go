package sim

// A connection to the simulation's Redis cut between a decision and its
// reply: the server received the limiter's script and ran it, and the
// reply never reached the worker, as a reset from a load balancer, a
// proxy or a NAT table that forgot the connection leaves it. The worker
// cannot tell whether its call was counted. A client that sent the script
// again on a new connection would have it counted twice (quota/client.go
// says why the product's never does); a worker that settles the decision
// as one of unknown outcome counts it once (docs/contract.md).

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"sort"
	"strconv"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ingestworks/ingest/ledger"
)

// cutLook is how long after a cut the rig reads what Redis counts from
// the cut's instant: past the worker's settling of the decision it lost,
// which it does as soon as Redis answers it again, and well within the
// pools' window.
const cutLook = 10 * time.Minute

// spendArg is the limiter's script's mode that decides, as it goes on the
// wire (RESP's bulk string).
var spendArg = []byte("$5\r\nspend\r\n")

// CutLook is what Redis counted in each pool, by call id, from the instant
// of a cut (At) to stallAnswer after it, read cutLook later.
type CutLook struct {
	At      time.Time
	Counted map[string][]string
}

// cutAt has the connection cut at the first decision sent at or after each
// of at, once the server has run it.
func (c *RedisClock) cutAt(at []time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.cutDue = append(c.cutDue, at...)
	sort.Slice(c.cutDue, func(i, j int) bool { return c.cutDue[i].Before(c.cutDue[j]) })
}

// takeCut reports whether a cut is due at now, and takes it.
func (c *RedisClock) takeCut(now time.Time) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.cutDue) == 0 || now.Before(c.cutDue[0]) {
		return false
	}
	c.cutDue = c.cutDue[1:]
	return true
}

// tookCut records a cut at now: to every rule but the cuts' own, a moment
// the worker could not reach the limiter, as a stall is.
func (c *RedisClock) tookCut(now time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.cut = append(c.cut, now)
	if n := len(c.stalled); n == 0 || !c.stalled[n-1].Equal(now) {
		c.stalled = append(c.stalled, now)
	}
}

// cuts is when a decision's connection was cut.
func (c *RedisClock) cuts() []time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]time.Time(nil), c.cut...)
}

// cutConn is a connection to the simulation's Redis that loses the reply
// to a decision sent while a cut is due.
type cutConn struct {
	net.Conn
	c     *RedisClock
	armed atomic.Bool // the next read loses its reply
	cut   atomic.Bool // the reply was lost: every read since meets the reset
}

// Write arms the cut when p holds a decision and one is due.
func (k *cutConn) Write(p []byte) (int, error) {
	if bytes.Contains(p, spendArg) && k.c.takeCut(time.Now()) {
		k.armed.Store(true)
	}
	return k.Conn.Write(p)
}

// Read, armed, waits for the reply, which says the server ran the
// decision, drops it and closes the connection: the worker reads a reset,
// there and at every read after.
func (k *cutConn) Read(p []byte) (int, error) {
	if k.armed.CompareAndSwap(true, false) {
		if _, err := k.Conn.Read(p); err != nil {
			return 0, err
		}
		k.Conn.Close()
		k.cut.Store(true)
		k.c.tookCut(time.Now())
	}
	if k.cut.Load() {
		return 0, &net.OpError{Op: "read", Net: "tcp", Source: k.LocalAddr(), Addr: k.RemoteAddr(), Err: os.NewSyscallError("read", syscall.ECONNRESET)}
	}
	return k.Conn.Read(p)
}

// SyscallConn is the socket's, so that the client's check of an idle
// connection looks at it as in production.
func (k *cutConn) SyscallConn() (syscall.RawConn, error) {
	if sc, ok := k.Conn.(syscall.Conn); ok {
		return sc.SyscallConn()
	}
	return nil, errors.ErrUnsupported
}

// lookAfterCuts reads, cutLook after each of the first n cuts taken before
// end, what s's Redis counts from the cut's instant (lookCut).
func lookAfterCuts(rc *RedisClock, s Shape, n int, end time.Time) ([]CutLook, error) {
	var out []CutLook
	for len(out) < n {
		cuts := rc.cuts()
		if len(cuts) == len(out) {
			if !time.Now().Add(time.Minute).Before(end) {
				return out, nil
			}
			time.Sleep(time.Minute)
			continue
		}
		at := cuts[len(out)]
		if !at.Add(cutLook).Before(end) {
			return out, nil
		}
		time.Sleep(time.Until(at.Add(cutLook)))
		lk, err := lookCut(s, at)
		if err != nil {
			return out, err
		}
		out = append(out, lk)
	}
	return out, nil
}

// lookCut reads each pool's log in s's Redis (docs/explanation/quota.md,
// "Inside the limiter", names its keys) from at to stallAnswer after it.
func lookCut(s Shape, at time.Time) (CutLook, error) {
	c, err := rigClient(s)
	if err != nil {
		return CutLook{}, err
	}
	defer c.Close()
	from := at.UnixMilli()
	lk := CutLook{At: at, Counted: map[string][]string{}}
	for _, p := range s.Costs.Pools {
		key := "ingest:{" + ledger.KeyHash(Key) + "}:log:" + p.Name
		es, err := c.XRange(context.Background(), key, strconv.FormatInt(from, 10), strconv.FormatInt(from+stallAnswer.Milliseconds(), 10)).Result()
		if err != nil && !errors.Is(err, redis.Nil) {
			return CutLook{}, fmt.Errorf("XRANGE %s: %w", key, err)
		}
		for _, e := range es {
			lk.Counted[p.Name] = append(lk.Counted[p.Name], e.ID)
		}
	}
	return lk, nil
}

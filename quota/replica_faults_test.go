package quota_test

// The limiter counting an admission once replicas hold it, on real
// redis-server processes: a failover to a replica that was behind, and a
// cheap call whose copy no replica confirmed. A proxy between the hosts
// and the primary holds or cuts what they send.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/internal/rig/redistest"
	"github.com/ingestworks/ingest/quota"
)

// proxy forwards TCP connections to a Redis server. cut drops every
// connection and refuses new ones (a partition); hold keeps what clients
// send (now and in connections made while holding) until flush.
type proxy struct {
	Addr   string
	target string
	ln     net.Listener

	mu       sync.Mutex
	links    []*link
	holdNew  bool
	cutConns bool
}

type link struct {
	client, server net.Conn
	mu             sync.Mutex
	held           bool
	buf            []byte
	eof            bool
}

func startProxy(t *testing.T, target string) *proxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &proxy{Addr: ln.Addr().String(), target: target, ln: ln}
	t.Cleanup(p.cut)
	go p.accept()
	return p
}

func (p *proxy) accept() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		s, err := net.Dial("tcp", p.target)
		if err != nil {
			c.Close()
			continue
		}
		p.mu.Lock()
		if p.cutConns {
			p.mu.Unlock()
			c.Close()
			s.Close()
			return
		}
		l := &link{client: c, server: s, held: p.holdNew}
		p.links = append(p.links, l)
		p.mu.Unlock()
		go func() { _, _ = io.Copy(c, s); c.Close() }()
		go l.up()
	}
}

// up forwards what the client sends, or keeps it while held.
func (l *link) up() {
	b := make([]byte, 32<<10)
	for {
		n, err := l.client.Read(b)
		l.mu.Lock()
		if n > 0 {
			if l.held {
				l.buf = append(l.buf, b[:n]...)
			} else {
				_, _ = l.server.Write(b[:n])
			}
		}
		if err != nil {
			l.eof = true
			if !l.held {
				l.server.Close()
			}
			l.mu.Unlock()
			return
		}
		l.mu.Unlock()
	}
}

// hold keeps, from now on, what every client sends (existing connections
// and new ones) until flush.
func (p *proxy) hold() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.holdNew = true
	for _, l := range p.links {
		l.mu.Lock()
		l.held = true
		l.mu.Unlock()
	}
}

// pass lets new connections through again; held ones stay held.
func (p *proxy) pass() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.holdNew = false
}

// flush sends what was held, late, and lets it through from then on.
func (p *proxy) flush() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, l := range p.links {
		l.mu.Lock()
		if l.held {
			_, _ = l.server.Write(l.buf)
			l.buf, l.held = nil, false
			if l.eof {
				l.server.Close()
			}
		}
		l.mu.Unlock()
	}
}

// cut drops every connection and refuses new ones.
func (p *proxy) cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cutConns = true
	p.ln.Close()
	for _, l := range p.links {
		l.client.Close()
		l.server.Close()
	}
}

// replicated waits until the replica holds everything the primary wrote.
func replicated(t *testing.T, primary, replica *redis.Client) {
	t.Helper()
	ctx := context.Background()
	for range 1200 { // a full sync forks and loads a snapshot: on a loaded machine, seconds
		p, _ := primary.Info(ctx, "replication").Result()
		r, _ := replica.Info(ctx, "replication").Result()
		po, ro := infoValue(p, "master_repl_offset"), infoValue(r, "slave_repl_offset")
		if strings.Contains(r, "master_link_status:up") && po != "" && po == ro {
			return
		}
		time.Sleep(25 * time.Millisecond)
	}
	t.Fatal("the replica never caught up with the primary within 30s")
}

func infoValue(info, field string) string {
	for _, line := range strings.Split(info, "\r\n") {
		if v, ok := strings.CutPrefix(line, field+":"); ok {
			return v
		}
	}
	return ""
}

// closedCosts: capacity 100 over an hour, closed while Redis cannot be
// reached (no fail_open).
func closedCosts(t testing.TB) *ingest.Costs {
	return parseCosts(t, `pools:
  default: {limit: 100, window: 1h}
operations:
  videos.list: {default: 1}
`)
}

// TestFaultReplicaBehind: a real replica (replicaof, through a proxy that
// can partition it) holds A's and B's first calls; the link is cut, B
// spends 20 more on the primary, and the replica is promoted (REPLICAOF NO
// ONE) with every worker repointed to it. Without Replicas, A, calling first,
// spends blind up to the capacity and B's first call finds the loss: the
// excess is at most what B lost. With Replicas = 1, B's calls that the
// replica did not confirm are refused (ErrUnavailable), so the failover
// loses no admitted call and the total is exactly the capacity.
func TestFaultReplicaBehind(t *testing.T) {
	t.Parallel()
	for _, replicas := range []int{0, 1} {
		t.Run(fmt.Sprintf("replicas=%d", replicas), func(t *testing.T) {
			t.Parallel()
			testReplicaBehind(t, replicas, false)
		})
	}
}

// TestFaultReplicaUnconfirmedCheapCall: the same failover with Replicas =
// 1 on a pool with a fail_open budget: a cheap call whose write the replica
// did not confirm must be refused too, not admitted unmetered.
func TestFaultReplicaUnconfirmedCheapCall(t *testing.T) {
	t.Parallel()
	testReplicaBehind(t, 1, true)
}

func testReplicaBehind(t *testing.T, replicas int, failOpen bool) {
	const lost = 20
	primary := redistest.Start(t)
	link := startProxy(t, primary.Addr)
	_, port, _ := net.SplitHostPort(link.Addr)
	replica := redistest.Start(t, "--replicaof", "127.0.0.1", port)
	pc, rc := newClient(t, primary.Addr), newClient(t, replica.Addr)
	key, costs := quotaKey(t), closedCosts(t)
	if failOpen {
		costs = faultCosts(t, false)
	}
	// A replica a loaded machine is slow to confirm on is not one cut off:
	// the hosts wait long for it, except while the link is cut, where
	// every call of B's waits out WAIT's half of the timeout. The other
	// half is the script's: it must answer within it, or the call is one
	// Redis did not answer (an outage, not an unconfirmed write), and a
	// loaded machine can take more than a short half.
	const patient, cut = 5 * time.Second, 2 * time.Second
	tweak := func(o *limOpts) { o.Replicas, o.Timeout = replicas, patient }
	replicated(t, pc, rc)
	a := newHost(t, primary.Addr, key, costs, "a", tweak)
	b := newHost(t, primary.Addr, key, costs, "b", tweak)
	for range 30 {
		a.spendN(1)
		b.spendN(1)
	}
	replicated(t, pc, rc)
	b.opts.Timeout = cut
	b.restart()
	link.cut()
	refused := 0
	for range lost {
		d, err := b.l.Take(context.Background(), ingest.Caller{}, "videos.list")
		switch {
		case err == nil && d.Allowed && !d.Unmetered:
			b.record(d)
		case errors.Is(err, quota.ErrUnavailable) && replicas > 0:
			if refused++; refused == 1 {
				t.Logf("an unconfirmed call: %v", err)
			}
		default:
			t.Fatalf("B on the primary while the replica is cut off: %+v, %v", d, err)
		}
	}
	do(t, replica.Addr, "REPLICAOF", "NO", "ONE")
	// The promoted server gets a replica of its own, as a failover
	// does, for the writes to be confirmed again.
	_, rport, _ := net.SplitHostPort(replica.Addr)
	replicated(t, rc, newClient(t, redistest.Start(t, "--replicaof", "127.0.0.1", rport).Addr))
	a.repoint(replica.Addr)
	b.opts.Timeout = patient
	b.repoint(replica.Addr)
	blind := fill(t, a)
	first := b.take()
	noticed := len(b.log.find("lost data")) > 0
	a.restart()
	later := fill(t, a, b)
	t.Logf("failover to a replica behind B's last %d calls, replicas=%d: %d refused unconfirmed; A admitted %d blind; B's first call noticed the loss: %v; then %d more; admitted %d / %d, ledgers a=%d b=%d, Redis %d",
		lost, replicas, refused, blind, noticed, later, total(a, b), capacity, a.admitted(), b.admitted(), used(t, a.l))
	if replicas == 0 {
		if first.Allowed || !noticed {
			t.Fatalf("B's first call on the promoted replica: %+v, loss found: %v; want refused and the loss found", first, noticed)
		}
		if total(a, b) > capacity+lost {
			t.Fatalf("admitted %d, more than capacity %d + B's lost %d", total(a, b), capacity, lost)
		}
		return
	}
	switch {
	case refused != lost:
		t.Fatalf("%d of B's %d unconfirmed calls refused; want all", refused, lost)
	case total(a, b) != capacity || used(t, a.l) != capacity:
		t.Fatalf("admitted %d, Redis counts %d; want exactly %d (nothing admitted was lost by the failover)", total(a, b), used(t, a.l), capacity)
	case noticed:
		t.Fatalf("B found a loss though every admitted call was confirmed by the replica")
	}
}

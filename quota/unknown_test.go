package quota_test

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/internal/rig/redistest"
)

// book is a ledger's keeping of decisions of unknown outcome, as the
// store keeps them: open until resolved; a resolved one that Redis had
// admitted is written as a call given back.
type book struct {
	mu        sync.Mutex
	open      []ingest.Unknown
	givenBack []ingest.Call
	refused   int
}

func (b *book) RecordUnknown(_ context.Context, u ingest.Unknown) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.open = append(b.open, u)
	return nil
}

func (b *book) Unknowns(_ context.Context, quotaKey string) ([]ingest.Unknown, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return slices.Clone(b.open), nil
}

func (b *book) ResolveUnknown(_ context.Context, u ingest.Unknown, call *ingest.Call, _ time.Time) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.open = slices.DeleteFunc(b.open, func(o ingest.Unknown) bool { return o.Instance == u.Instance && o.Token == u.Token })
	if call == nil {
		b.refused++
	} else {
		b.givenBack = append(b.givenBack, *call)
	}
	return nil
}

func (b *book) counts() (open, givenBack, refused int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.open), len(b.givenBack), b.refused
}

// TestFaultUnknownReconciled: cheap calls go to a hung server and the
// client gives up on each (outcome unknown, refused to the caller, kept in
// the ledger). The worker stops; the server resumes and runs some of them.
// A new worker on the same ledger reconciles them by token at its first
// answer: what Redis admitted is given back (the calls were never made),
// and a request still on its way is fenced off. Afterwards the ledger and
// Redis agree to the unit, and the pool fills to exactly its capacity.
func TestFaultUnknownReconciled(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	key := quotaKey(t)
	b := &book{}
	first := hungHost(t, srv, key, func(o *limOpts) { o.Unknowns = b })
	first.spendSteadily(90)
	resume := stop(t, srv)
	if unmetered, _ := hungTakes(t, first, 5); unmetered != 3 {
		t.Fatalf("%d of 5 cheap calls went ahead unmetered, want the fail_open budget, 3", unmetered)
	}
	// Only the first request goes out: once the limiter is known to be
	// down, the next calls first try to write the unmetered calls back,
	// and fail open or are refused when that gets no answer.
	if open, _, _ := b.counts(); open != 1 {
		t.Fatalf("ledger: %d decisions of unknown outcome, want 1", open)
	}
	resume()
	c := newClient(t, srv.Addr)
	// What the stopped server was sent waits in its sockets; it has run
	// all of it by the time it answers a command sent after it resumed
	// (one thread reads every ready connection before it replies).
	do(t, srv.Addr, "PING")
	n, _ := c.XLen(context.Background(), "ingest:{"+key+"}:log:default").Result()
	ghosts := n - 90
	// The next worker on this ledger (the first one stopped), with the
	// first one's calls.
	next := hungHost(t, srv, key, func(o *limOpts) { o.Unknowns = b; o.Timeout = steadyTimeout }) // no fault left to time
	next.ledger = first.ledger
	after := fill(t, next)
	open, given, refused := b.counts()
	xlen, _ := c.XLen(context.Background(), "ingest:{"+key+"}:log:default").Result()
	t.Logf("unknown outcomes: 1; Redis had run %d of them; reconciled: %d given back, %d never admitted, %d open; then %d admitted; ledger %d units, Redis %d units (%d entries) / %d",
		ghosts, given, refused, open, after, next.admitted(), used(t, next.l), xlen, capacity)
	switch {
	case open != 0 || given+refused != 1:
		t.Fatalf("ledger: %d still open, %d given back, %d refused; want the 1 resolved", open, given, refused)
	case int64(given) != ghosts:
		t.Fatalf("ledger: %d given back, but Redis had admitted %d of the requests given up on", given, ghosts)
	case next.admitted()+3 != capacity || after != capacity-93:
		t.Fatalf("after reconciling, %d more admitted, %d metered and 3 unmetered in all; want %d and %d", after, next.admitted(), capacity-93, capacity)
	case used(t, next.l) != capacity || xlen != int64(len(next.ledger)):
		t.Fatalf("Redis counts %d units in %d entries, the ledger %d calls: they must agree", used(t, next.l), xlen, len(next.ledger))
	}
	for _, g := range b.givenBack {
		if n, _ := c.XRange(context.Background(), "ingest:{"+key+"}:log:default", g.ID, g.ID).Result(); len(n) != 0 {
			t.Fatalf("call %s given back in the ledger is still in Redis", g.ID)
		}
	}
}

// TestFaultUnknownSlowServer: another connection holds the server in
// DEBUG SLEEP; a take with the limiter's timeout gives up while its request
// waits, and Redis admits it when it wakes. The next answer reconciles it:
// given back in Redis and in the ledger alike.
func TestFaultUnknownSlowServer(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t, "--enable-debug-command", "local")
	key := quotaKey(t)
	b := &book{}
	h := hungHost(t, srv, key, func(o *limOpts) { o.Unknowns = b })
	h.spendSteadily(10)
	// The sleep is written to the server before the take is sent: the
	// server reads it first and sleeps through the take's timeout.
	slow, err := net.Dial("tcp", srv.Addr)
	if err != nil {
		t.Fatal(err)
	}
	defer slow.Close()
	_ = slow.SetDeadline(time.Now().Add(30 * time.Second))
	replies := bufio.NewReader(slow)
	// a connection the server has taken in and read from before
	if _, err := slow.Write([]byte("*1\r\n$4\r\nPING\r\n")); err != nil {
		t.Fatal(err)
	}
	if line, err := replies.ReadString('\n'); err != nil || line != "+PONG\r\n" {
		t.Fatalf("PING: %q, %v", line, err)
	}
	if _, err := slow.Write([]byte("*3\r\n$5\r\nDEBUG\r\n$5\r\nSLEEP\r\n$1\r\n2\r\n")); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		line, err := replies.ReadString('\n')
		if err == nil && line != "+OK\r\n" {
			err = fmt.Errorf("DEBUG SLEEP: %q", line)
		}
		done <- err
	}()
	d, err := h.l.Take(context.Background(), ingest.Caller{}, "videos.list")
	if err != nil || !d.Unmetered {
		t.Fatalf("take while Redis sleeps: %+v, %v; want admitted unmetered (a hung Redis is an outage)", d, err)
	}
	h.record(d)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	h.spendN(1) // the first answer: reconciles
	open, given, refused := b.counts()
	t.Logf("slow server: 1 unknown; %d given back, %d never admitted; Redis %d units, ledger %d", given, refused, used(t, h.l), h.admitted())
	if open != 0 || given != 1 || refused != 0 {
		t.Fatalf("ledger: %d open, %d given back, %d refused; want the one Redis admitted late given back", open, given, refused)
	}
	if u := used(t, h.l); u != int64(h.admitted())+1 || u != 12 {
		t.Fatalf("Redis counts %d units, the ledger %d metered and 1 unmetered; want 12 both", u, h.admitted())
	}
}

// TestFaultUnknownLateRequestFenced: a request is held on its way to Redis
// (a proxy keeps its bytes) while the client gives up on it: a cheap call,
// so it goes ahead unmetered. The next call reaches Redis and reconciles:
// the token is fenced before the request arrives. When it does arrive, it
// is refused, so the call counts once (as the unmetered call written back)
// and Redis and the ledger agree.
func TestFaultUnknownLateRequestFenced(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	p := startProxy(t, srv.Addr)
	key := quotaKey(t)
	b := &book{}
	h := hungHost(t, &redistest.Server{Addr: p.Addr}, key, func(o *limOpts) { o.Unknowns = b })
	h.spendSteadily(10)
	p.hold()
	d, err := h.l.Take(context.Background(), ingest.Caller{}, "videos.list")
	if err != nil || !d.Unmetered {
		t.Fatalf("take while the request is held: %+v, %v; want admitted unmetered", d, err)
	}
	h.record(d)
	p.pass()
	h.spendN(1) // reconciles: fences the held request's token
	ran := scriptCalls(t, srv.Addr)
	p.flush()
	// Redis has run what was held once its count of script calls moves.
	for deadline := time.Now().Add(10 * time.Second); scriptCalls(t, srv.Addr) == ran; {
		if time.Now().After(deadline) {
			t.Fatal("the held request never reached Redis")
		}
		time.Sleep(5 * time.Millisecond)
	}
	open, given, refused := b.counts()
	u := used(t, h.l)
	t.Logf("late request: reconciled before it arrived (%d given back, %d never admitted, %d open); ledger %d metered + 1 unmetered, Redis %d",
		given, refused, open, h.admitted(), u)
	if open != 0 || refused != 1 {
		t.Fatalf("ledger: %d open, %d given back, %d never admitted; want the held one never admitted", open, given, refused)
	}
	if u != int64(h.admitted())+1 {
		t.Fatalf("Redis counts %d, the ledger %d metered + 1 unmetered: the late request was admitted after it was fenced", u, h.admitted())
	}
}

// scriptCalls is how many scripts (EVALSHA) Redis has run, by INFO
// commandstats.
func scriptCalls(t *testing.T, addr string) int64 {
	t.Helper()
	c := redis.NewClient(&redis.Options{Addr: addr})
	defer c.Close()
	info, err := c.Info(context.Background(), "commandstats").Result()
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(info, "\n") {
		if rest, ok := strings.CutPrefix(strings.TrimSpace(line), "cmdstat_evalsha:calls="); ok {
			n, err := strconv.ParseInt(rest[:strings.IndexByte(rest+",", ',')], 10, 64)
			if err != nil {
				t.Fatalf("INFO commandstats: %q: %v", line, err)
			}
			return n
		}
	}
	return 0
}

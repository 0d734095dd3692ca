package quota_test

import (
	"context"
	"errors"
	"io"
	"net"
	"net/url"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/internal/rig/pgtest"
	"github.com/ingestworks/ingest/quota"
)

// slowLink forwards TCP connections to a PostgreSQL server and holds each reply the
// server sends for lag before passing it on, as a far or busy server
// answers: every statement answered, each late.
type slowLink struct {
	Addr string
	lag  atomic.Int64 // nanoseconds
	held atomic.Bool  // replies kept back for good: a server gone silent
}

func startSlowLink(t *testing.T, raw string) *slowLink {
	t.Helper()
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	target := u.Host
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	l := &slowLink{Addr: ln.Addr().String()}
	var conns []net.Conn // the accept loop's alone until done
	done := make(chan struct{})
	t.Cleanup(func() {
		ln.Close()
		<-done
		for _, c := range conns {
			c.Close()
		}
	})
	go func() {
		defer close(done)
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s, err := net.Dial("tcp", target)
			if err != nil {
				c.Close()
				continue
			}
			conns = append(conns, c, s)
			go func() { _, _ = io.Copy(s, c); s.Close() }()
			go l.down(s, c)
		}
	}()
	return l
}

// down passes the server's replies to the client, each after the lag.
func (l *slowLink) down(s, c net.Conn) {
	defer c.Close()
	b := make([]byte, 64<<10)
	for {
		n, err := s.Read(b)
		if n > 0 {
			time.Sleep(time.Duration(l.lag.Load()))
			for l.held.Load() {
				time.Sleep(10 * time.Millisecond)
			}
			if _, werr := c.Write(b[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

// through is url with its host the link's.
func (l *slowLink) through(t *testing.T, raw string) string {
	t.Helper()
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	u.Host = l.Addr
	return u.String()
}

// TestPostgresSlowServerDecides: the limiter's bound on PostgreSQL is the
// server's silence, not the decision's length. Through a link that holds
// every reply for a quarter of the bound, a decision of its many statements
// takes longer than the bound and still decides, exactly, and so does a
// second process's waiting its turn behind it; once the link
// keeps the replies back, a decision fails as unavailable within about the
// bound, and nothing it began counts.
func TestPostgresSlowServerDecides(t *testing.T) {
	t.Parallel()
	raw := pgtest.URL(t)
	openStore(t, raw) // the schema, at full speed
	link := startSlowLink(t, raw)
	const bound = 2 * time.Second
	key, costs := quotaKey(t), faultCosts(t, false)
	l := pgLimiter(t, link.through(t, raw), limOpts{QuotaKey: key, Costs: costs, Timeout: bound})
	take(t, l, "videos.list") // the connection made and the limiter's rows in place

	link.lag.Store(int64(bound / 4))
	type result struct {
		d   ingest.Decision
		err error
	}
	slow := make(chan result, 1)
	start := time.Now()
	go func() {
		d, err := l.Take(context.Background(), ingest.Caller{}, "videos.list")
		slow <- result{d, err}
	}()
	// A second process, on a fast link, asks while the slow one holds
	// the key: its turn comes when the slow decision ends, however long
	// past the bound, as long as the server keeps answering.
	db := rawPG(t, raw)
	waitUntil(t, "the slow decision to hold the quota key", func() bool {
		return pgCount(t, db, `SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND granted
			AND classid = 1903521652 AND objid::int = hashtext($1)`, key) == 1
	})
	fast := pgLimiter(t, raw, limOpts{QuotaKey: key, Costs: costs, Timeout: bound})
	behind := time.Now()
	if d := take(t, fast, "videos.list"); !d.Allowed {
		t.Fatalf("the call behind the slow one refused: %+v", d)
	}
	waited := time.Since(behind)
	if r := <-slow; r.err != nil || !r.d.Allowed {
		t.Fatalf("the slow call: %+v, %v; want admitted", r.d, r.err)
	}
	slowest := time.Since(start)
	if slowest <= bound || waited <= bound {
		t.Fatalf("the slow decision took %s, the one behind it %s, within their bound %s: the link was not slow enough to show anything", slowest, waited, bound)
	}

	link.lag.Store(0)
	link.held.Store(true)
	start = time.Now()
	d, err := l.Take(context.Background(), ingest.Caller{}, "videos.list")
	silent := time.Since(start)
	link.held.Store(false)
	if !errors.Is(err, quota.ErrUnavailable) || d.Allowed {
		t.Fatalf("a call to a server gone silent: %+v, %v; want ErrUnavailable", d, err)
	}
	logged := pgCount(t, rawPG(t, raw), `SELECT count(*) FROM quota_log WHERE quota_key = $1`, key)
	t.Logf("replies each %s late: the decision took %s, the one waiting its turn %s (bound %s); a silent server: %v after %s; %d in the log",
		bound/4, slowest, waited, bound, err, silent, logged)
	if logged != 3 {
		t.Fatalf("the log holds %d calls, want the 3 admitted", logged)
	}
}

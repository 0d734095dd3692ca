package fetch_test

import (
	"bufio"
	"context"
	"errors"
	"net"
	"net/http"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/fetch"
)

// An attempt's bound runs from before the limiter is asked: the gate and
// the request see one deadline, at most ingest.Delivery after the gate was
// entered, so that the upstream cannot receive the call later than that
// after its admission (docs/explanation/quota.md, "A call's delivery").
func TestAnAttemptIsBoundFromBeforeItsAdmission(t *testing.T) {
	var mu sync.Mutex
	var entered, gateDeadline, requestDeadline time.Time
	var gateHas, requestHas bool
	gate := func(ctx context.Context, op string) (func(context.Context) error, error) {
		mu.Lock()
		defer mu.Unlock()
		entered = time.Now()
		gateDeadline, gateHas = ctx.Deadline()
		return ingest.NoGiveBack, nil
	}
	record := roundTripFunc(func(r *http.Request) (*http.Response, error) {
		mu.Lock()
		requestDeadline, requestHas = r.Context().Deadline()
		mu.Unlock()
		return http.DefaultTransport.RoundTrip(r)
	})
	e := newEnv(t, func(o *fetch.Options) { o.HTTPClient = &http.Client{Transport: record}; o.MaxAttempts = 1 })
	if _, err := e.client.Trending(context.Background(), gate, "GB", ""); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if !gateHas || !requestHas {
		t.Fatalf("the gate's context has a deadline: %v; the request's: %v; want both", gateHas, requestHas)
	}
	if gateDeadline.After(entered.Add(ingest.Delivery)) {
		t.Errorf("the gate's deadline %s is more than %s after it was entered (%s)", gateDeadline, ingest.Delivery, entered)
	}
	if !requestDeadline.Equal(gateDeadline) {
		t.Errorf("the request's deadline %s is not the gate's %s", requestDeadline, gateDeadline)
	}
}

// A request the worker gives up on is reset, not closed: what the kernel
// still held of it is dropped rather than sent once a cut link is back
// (docs/explanation/quota.md, "A call's delivery"). The upstream here takes the
// request and never answers; after the client gives up, its next read
// says how the connection ended.
func TestAGivenUpRequestResetsItsConnection(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	ended, got := make(chan error, 1), make(chan struct{})
	go func() {
		c, err := ln.Accept()
		if err != nil {
			ended <- err
			return
		}
		defer c.Close()
		r := bufio.NewReader(c)
		for { // the request's head, to its blank line
			line, err := r.ReadString('\n')
			if err != nil {
				ended <- err
				return
			}
			if line == "\r\n" {
				break
			}
		}
		close(got)
		_, err = r.ReadByte() // blocks until the client ends the connection
		ended <- err
	}()
	c, err := fetch.New(context.Background(), fetch.Options{Now: time.Now, Endpoint: "http://" + ln.Addr().String() + "/", APIKey: key, MaxAttempts: 1})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := c.Trending(ctx, nil, "GB", "")
		done <- err
	}()
	// The client gives up once the upstream has the request's head.
	select {
	case <-got:
	case err := <-ended:
		t.Fatalf("the upstream's read of the request: %v", err)
	}
	cancel()
	if err := <-done; err == nil {
		t.Fatal("the call succeeded; want it given up")
	}
	err = <-ended
	if !errors.Is(err, syscall.ECONNRESET) {
		t.Errorf("the upstream's read after the client gave up: %v; want a reset (ECONNRESET), not a close", err)
	}
}

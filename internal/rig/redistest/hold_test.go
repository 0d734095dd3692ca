package redistest

import (
	"errors"
	"net"
	"syscall"
	"testing"
)

// TestAStoppedServersPortIsRefusedAndHeld: a stopped server's port refuses
// connections, as a Redis that is down does, and no other listener is
// given it, so that a test of the outage never meets another test's
// server there.
func TestAStoppedServersPortIsRefusedAndHeld(t *testing.T) {
	s := Start(t)
	s.Stop()
	if c, err := net.Dial("tcp", s.Addr); err == nil {
		c.Close()
		t.Fatalf("a connection to the stopped server's %s was taken", s.Addr)
	} else if !errors.Is(err, syscall.ECONNREFUSED) {
		t.Errorf("dial the stopped server: %v, want connection refused", err)
	}
	if ln, err := net.Listen("tcp", s.Addr); err == nil {
		ln.Close()
		t.Errorf("another listener took the stopped server's %s", s.Addr)
	}
	s.Restart(t)
	c, err := net.Dial("tcp", s.Addr)
	if err != nil {
		t.Fatalf("the restarted server on %s: %v", s.Addr, err)
	}
	c.Close()
}

package jobs

import (
	"errors"
	"net"
)

// Unreachable says whether err shows that the upstream could not be
// reached at all: the connection was refused or the name did not resolve,
// so nothing was sent. Every other region of a run would fail the same way,
// so the run stops at the first (after the client's own retries) instead
// of retrying region after region.
func Unreachable(err error) bool {
	var dns *net.DNSError
	if errors.As(err, &dns) {
		return true
	}
	var op *net.OpError
	return errors.As(err, &op) && op.Op == "dial"
}

// Cause is what an Unreachable error says about the network: the DNS or
// the dial error, without what the client wrapped around it.
func Cause(err error) string {
	var dns *net.DNSError
	if errors.As(err, &dns) {
		return dns.Error()
	}
	var op *net.OpError
	if errors.As(err, &op) {
		return op.Error()
	}
	return err.Error()
}

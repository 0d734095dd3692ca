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

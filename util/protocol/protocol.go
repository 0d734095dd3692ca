// Package protocol tells which server answers at an address, when a
// client of Redis or PostgreSQL got a reply it could not read: a URL that
// reaches the wrong server (a port typo onto an HTTP server, PostgreSQL on
// the Redis URL) is a configuration error for the operator to fix, never
// an outage for the limiter's fail policy to ride out.
//
// It names a server only by what the server said: a refused connection, a
// silence or a connection closed without a word names none, and stays the
// outage it may be (a proxy whose backend is down does just that).
package protocol

import (
	"bytes"
	"context"
	"net"
	"time"
)

// Protocol is what a server at an address answered as.
type Protocol string

const (
	Unknown    Protocol = ""           // nothing said: refused, silent, or closed
	Redis      Protocol = "Redis"      // a RESP reply (+PONG, or an error such as -NOAUTH)
	PostgreSQL Protocol = "PostgreSQL" // an answer to an SSLRequest
	HTTP       Protocol = "HTTP"       // a status line
	Other      Protocol = "a protocol that is neither Redis's, PostgreSQL's nor HTTP's"
)

// probeWait bounds each probe's wait for a first reply: the servers named
// here answer a probe at once, so a longer silence is no answer.
const probeWait = 3 * time.Second

// sslRequest is PostgreSQL's SSLRequest: a server answers it with one
// byte, S or N (E from a server too old to know it), before any
// credentials are asked.
var sslRequest = []byte{0, 0, 0, 8, 0x04, 0xd2, 0x16, 0x2f}

// Identify asks the server at address (network "tcp" or "unix") what it
// speaks: first Redis's inline PING, which Redis and HTTP servers answer
// and PostgreSQL drops, then PostgreSQL's SSLRequest.
func Identify(ctx context.Context, network, address string) Protocol {
	first := probe(ctx, network, address, []byte("PING\r\n"))
	switch {
	case len(first) == 0:
	case bytes.HasPrefix(first, []byte("HTTP/")):
		return HTTP
	case first[0] == '+' || first[0] == '-':
		return Redis
	default:
		return Other
	}
	if r := probe(ctx, network, address, sslRequest); len(r) > 0 && bytes.IndexByte([]byte("SNE"), r[0]) >= 0 {
		return PostgreSQL
	}
	return Unknown
}

// probe writes msg on a new connection and returns the first bytes read
// back; none when the server refused, stayed silent or closed.
func probe(ctx context.Context, network, address string, msg []byte) []byte {
	ctx, cancel := context.WithTimeout(ctx, probeWait)
	defer cancel()
	var d net.Dialer
	c, err := d.DialContext(ctx, network, address)
	if err != nil {
		return nil
	}
	defer c.Close()
	deadline, _ := ctx.Deadline()
	c.SetDeadline(deadline)
	if _, err := c.Write(msg); err != nil {
		return nil
	}
	buf := make([]byte, 64)
	n, _ := c.Read(buf)
	return buf[:n]
}

// Answered is what a message says the server did: "answered as HTTP".
func (p Protocol) Answered() string {
	if p == Other {
		return "answered in " + string(p)
	}
	return "answered as " + string(p)
}

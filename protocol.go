// Which server answers at an address, when a client of Redis or
// PostgreSQL got a reply it could not read: a URL that reaches the wrong
// server (a port typo onto an HTTP server, PostgreSQL on the Redis URL) is
// a configuration error for the operator to fix, never an outage for the
// limiter's fail policy to ride out. Both adapters that dial a server
// (quota's Redis, store's PostgreSQL) name so what answered instead.
//
// A server is named only by what it said: a refused connection, a
// silence or a connection closed without a word names none, and stays the
// outage it may be (a proxy whose backend is down does just that).

package ingest

import (
	"bytes"
	"context"
	"net"
	"time"
)

// Protocol is what a server at an address answered as.
type Protocol string

const (
	ProtocolUnknown    Protocol = ""           // nothing said: refused, silent, or closed
	ProtocolRedis      Protocol = "Redis"      // a RESP reply (+PONG, or an error such as -NOAUTH)
	ProtocolPostgreSQL Protocol = "PostgreSQL" // an answer to an SSLRequest
	ProtocolHTTP       Protocol = "HTTP"       // a status line
	ProtocolOther      Protocol = "a protocol that is neither Redis's, PostgreSQL's nor HTTP's"
)

// probeWait bounds each probe's wait for a first reply: the servers named
// here answer a probe at once, so a longer silence is no answer.
const probeWait = 3 * time.Second

// sslRequest is PostgreSQL's SSLRequest: a server answers it with one
// byte, S or N (E from a server too old to know it), before any
// credentials are asked.
var sslRequest = []byte{0, 0, 0, 8, 0x04, 0xd2, 0x16, 0x2f}

// IdentifyServer asks the server at address (network "tcp" or "unix")
// what it speaks: first Redis's inline PING, which Redis and HTTP servers
// answer and PostgreSQL drops, then PostgreSQL's SSLRequest.
func IdentifyServer(ctx context.Context, network, address string) Protocol {
	first := probeServer(ctx, network, address, []byte("PING\r\n"))
	switch {
	case len(first) == 0:
	case bytes.HasPrefix(first, []byte("HTTP/")):
		return ProtocolHTTP
	case first[0] == '+' || first[0] == '-':
		return ProtocolRedis
	default:
		return ProtocolOther
	}
	if r := probeServer(ctx, network, address, sslRequest); len(r) > 0 && bytes.IndexByte([]byte("SNE"), r[0]) >= 0 {
		return ProtocolPostgreSQL
	}
	return ProtocolUnknown
}

// probeServer writes msg on a new connection and returns the first bytes read
// back; none when the server refused, stayed silent or closed.
func probeServer(ctx context.Context, network, address string, msg []byte) []byte {
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
	if p == ProtocolOther {
		return "answered in " + string(p)
	}
	return "answered as " + string(p)
}

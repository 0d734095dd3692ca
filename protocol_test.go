package ingest

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"testing"

	"github.com/ingestworks/ingest/internal/rig/pgtest"
	"github.com/ingestworks/ingest/internal/rig/redistest"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Run(m)) }

// listen serves each connection with serve, until the test ends.
func listen(t *testing.T, serve func(net.Conn)) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go serve(c)
		}
	}()
	return ln.Addr().String()
}

// Each server is named by what it said, and one that said nothing is
// named as nothing: a refusal, a silence and a close stay outages.
func TestIdentifyNamesAServerByWhatItSaid(t *testing.T) {
	web := httptest.NewServer(http.NotFoundHandler())
	t.Cleanup(web.Close)
	pg, err := url.Parse(pgtest.URL(t))
	if err != nil {
		t.Fatal(err)
	}
	rs := redistest.Start(t)
	hold := make(chan struct{})
	t.Cleanup(func() { close(hold) })
	closed, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	refused := closed.Addr().String()
	closed.Close()
	for _, c := range []struct {
		name, addr string
		want       Protocol
	}{
		{"an ProtocolHTTP server", web.Listener.Addr().String(), ProtocolHTTP},
		{"PostgreSQL", pg.Host, ProtocolPostgreSQL},
		{"Redis", rs.Addr, ProtocolRedis},
		{"a server of garbage", listen(t, func(c net.Conn) { c.Write([]byte("garbage\x00\x01\r\n")); c.Close() }), ProtocolOther},
		{"a refused port", refused, ProtocolUnknown},
		{"a silent server", listen(t, func(c net.Conn) { <-hold; c.Close() }), ProtocolUnknown},
		{"a server that closes at once", listen(t, func(c net.Conn) { c.Close() }), ProtocolUnknown},
	} {
		if got := IdentifyServer(context.Background(), "tcp", c.addr); got != c.want {
			t.Errorf("%s at %s: identified as %q, want %q", c.name, c.addr, got, c.want)
		}
	}
}

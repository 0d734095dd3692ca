package edge

import (
	"crypto/tls"
	"net/http/httptest"
	"net/netip"
	"testing"
)

// TestOnlyATrustedProxyNamesTheClient: a peer that is no trusted proxy is
// the client, whatever X-Forwarded-For says; behind trusted proxies the
// client is the nearest address that is not one, the ones left of it
// being the client's to write.
func TestOnlyATrustedProxyNamesTheClient(t *testing.T) {
	t.Parallel()
	p := Proxies{netip.MustParsePrefix("10.0.0.0/8"), netip.MustParsePrefix("::1/128")}
	for _, c := range []struct{ name, peer, xff, want string }{
		{"no proxy in front", "203.0.113.9:4000", "198.51.100.1", "203.0.113.9"},
		{"one trusted proxy", "10.0.0.2:4000", "198.51.100.1", "198.51.100.1"},
		{"a client's own header left of the proxy's", "10.0.0.2:4000", "192.0.2.66, 198.51.100.1", "198.51.100.1"},
		{"two trusted hops", "10.0.0.2:4000", "198.51.100.1, 10.0.0.3", "198.51.100.1"},
		{"a trusted proxy over IPv6", "[::1]:4000", "198.51.100.7", "198.51.100.7"},
		{"a hop that is no address stops the walk", "10.0.0.2:4000", "198.51.100.1, junk", "10.0.0.2"},
	} {
		r := httptest.NewRequest("GET", "/", nil)
		r.RemoteAddr = c.peer
		if c.xff != "" {
			r.Header.Set("X-Forwarded-For", c.xff)
		}
		if got := p.Client(r); got != c.want {
			t.Errorf("%s: Client = %q, want %q", c.name, got, c.want)
		}
	}
}

// TestOnlyATrustedProxySaysTLS: X-Forwarded-Proto is believed from a
// trusted proxy alone; a TLS connection of the server's own is TLS.
func TestOnlyATrustedProxySaysTLS(t *testing.T) {
	t.Parallel()
	p := Proxies{netip.MustParsePrefix("10.0.0.0/8")}
	ask := func(peer, proto string) bool {
		r := httptest.NewRequest("GET", "/", nil)
		r.RemoteAddr = peer
		r.Header.Set("X-Forwarded-Proto", proto)
		return p.OverTLS(r)
	}
	if !ask("10.1.2.3:80", "https") || ask("10.1.2.3:80", "http") || ask("203.0.113.9:80", "https") {
		t.Errorf("trusted https %v, trusted http %v, untrusted https %v; want true, false, false",
			ask("10.1.2.3:80", "https"), ask("10.1.2.3:80", "http"), ask("203.0.113.9:80", "https"))
	}
	r := httptest.NewRequest("GET", "/", nil)
	r.TLS = &tls.ConnectionState{}
	if !p.OverTLS(r) {
		t.Error("a TLS connection of the server's own: not over TLS")
	}
}

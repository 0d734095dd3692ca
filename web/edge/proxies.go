package edge

import (
	"net"
	"net/http"
	"net/netip"
	"strings"
)

// Proxies are the peers in front (a cache, a load balancer) whose
// forwarding headers are believed: X-Forwarded-For naming the client,
// X-Forwarded-Proto saying the browser came over TLS. Any other peer is
// the client, whatever its headers say, since a client may write them.
type Proxies []netip.Prefix

// Client is the address a request is metered and throttled by: the
// peer's, or, when the peer is one of p, the nearest address in
// X-Forwarded-For that is not (the ones left of it are the client's to
// write, so they are never believed).
func (p Proxies) Client(r *http.Request) string {
	peer, host, ok := p.viaProxy(r)
	if !ok {
		return host
	}
	hops := strings.Split(strings.Join(r.Header.Values("X-Forwarded-For"), ","), ",")
	for i := len(hops) - 1; i >= 0; i-- {
		a, err := netip.ParseAddr(strings.TrimSpace(hops[i]))
		if err != nil {
			break
		}
		peer = a.Unmap()
		if !p.trusted(peer) {
			break
		}
	}
	return peer.String()
}

// OverTLS reports whether the browser reached this server over TLS: its
// own connection, or one of p saying so in X-Forwarded-Proto.
func (p Proxies) OverTLS(r *http.Request) bool {
	if r.TLS != nil {
		return true
	}
	if _, _, ok := p.viaProxy(r); !ok {
		return false
	}
	proto, _, _ := strings.Cut(r.Header.Get("X-Forwarded-Proto"), ",")
	return strings.EqualFold(strings.TrimSpace(proto), "https")
}

// viaProxy is r's peer, and whether it is one of p; host is the peer as
// written when it is not an address.
func (p Proxies) viaProxy(r *http.Request) (peer netip.Addr, host string, ok bool) {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	peer, err = netip.ParseAddr(host)
	return peer, host, err == nil && p.trusted(peer)
}

func (p Proxies) trusted(a netip.Addr) bool {
	a = a.Unmap()
	for _, pre := range p {
		if pre.Contains(a) {
			return true
		}
	}
	return false
}

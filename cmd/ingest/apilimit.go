package main

import (
	"net/netip"
	"strings"
)

// trustedProxiesUsage is --trusted-proxies's help, on serve and run.
const trustedProxiesUsage = "proxies whose X-Forwarded-For names the client (for the API's plans and the throttle of wrong tokens), CIDRs comma-separated (default none: the peer is the client)"

// parseTrustedProxies reads --trusted-proxies: CIDRs or single addresses,
// comma-separated.
func parseTrustedProxies(s string) ([]netip.Prefix, error) {
	var out []netip.Prefix
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f == "" {
			continue
		}
		p, err := netip.ParsePrefix(f)
		if err != nil {
			a, aerr := netip.ParseAddr(f)
			if aerr != nil {
				return nil, usageErrorf("--trusted-proxies: want CIDRs or addresses, comma-separated (10.0.0.0/8,::1), got %q", f)
			}
			p = netip.PrefixFrom(a.Unmap(), a.Unmap().BitLen())
		}
		out = append(out, p.Masked())
	}
	return out, nil
}

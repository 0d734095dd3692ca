package listener

import (
	"fmt"
	"net"
	"net/http"
	"strings"
)

// Healthz asks url (a /healthz) and fails unless it answers 2xx: the
// container's health check (ingest probe).
func Healthz(c *http.Client, url string) error {
	res, err := c.Get(url)
	if err != nil {
		return fmt.Errorf("probe: %w", err)
	}
	res.Body.Close()
	if res.StatusCode/100 != 2 {
		return fmt.Errorf("probe %s: %s", url, res.Status)
	}
	return nil
}

// HealthzURLs are the /healthz of run --listen and of serve, as their
// environment variables (or serve's default) place them, asked on loopback.
func HealthzURLs(getenv func(string) string) []string {
	var out []string
	for _, a := range []struct{ env, def string }{{"INGEST_RUN_LISTEN", ""}, {"INGEST_SERVE_LISTEN", "127.0.0.1:8080"}} {
		addr := strings.TrimSpace(getenv(a.env))
		if addr == "" {
			addr = a.def
		}
		if addr == "" {
			continue
		}
		host, port, err := net.SplitHostPort(addr)
		if err != nil {
			continue
		}
		if host == "" || host == "0.0.0.0" || host == "::" {
			host = "127.0.0.1"
		}
		out = append(out, "http://"+net.JoinHostPort(host, port)+"/healthz")
	}
	return out
}

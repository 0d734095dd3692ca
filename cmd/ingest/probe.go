package main

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"
)

// newProbeCmd is the container's health check: images built FROM scratch
// have no curl, so the binary asks its own /healthz. Without a URL it asks
// where this image's listeners are, whichever command runs: run --listen
// (INGEST_RUN_LISTEN) and serve (INGEST_SERVE_LISTEN, else its default),
// so one HEALTHCHECK line serves both.
func newProbeCmd() *cobra.Command {
	var timeout time.Duration
	cmd := &cobra.Command{
		Use:    "probe [URL]",
		Short:  "GET URL (default: the run --listen and serve addresses' /healthz) and exit 0 on a 2xx answer, 1 otherwise (a container health check)",
		Hidden: true,
		Args:   cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			urls := args
			if len(urls) == 0 {
				urls = probeURLs()
			}
			c := &http.Client{Timeout: timeout}
			var errs []error
			for _, u := range urls {
				err := getHealthz(c, u)
				if err == nil {
					return nil
				}
				errs = append(errs, err)
			}
			return runtimeError(errors.Join(errs...))
		},
	}
	cmd.Flags().DurationVar(&timeout, "timeout", 3*time.Second, "give up on each address after this long")
	return uses(cmd)
}

func getHealthz(c *http.Client, url string) error {
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

// probeURLs are the /healthz of run --listen and of serve, as their
// environment variables (or serve's default) place them, asked on loopback.
func probeURLs() []string {
	var out []string
	for _, a := range []struct{ env, def string }{{"INGEST_RUN_LISTEN", ""}, {"INGEST_SERVE_LISTEN", "127.0.0.1:8080"}} {
		addr := strings.TrimSpace(os.Getenv(a.env))
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

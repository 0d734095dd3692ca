package main

import (
	"errors"
	"net/http"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/ingestworks/ingest/web/listener"
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
				urls = listener.HealthzURLs(os.Getenv)
			}
			c := &http.Client{Timeout: timeout}
			var errs []error
			for _, u := range urls {
				err := listener.Healthz(c, u)
				if err == nil {
					return nil
				}
				errs = append(errs, err)
			}
			return errors.Join(errs...)
		},
	}
	cmd.Flags().DurationVar(&timeout, "timeout", 3*time.Second, "give up on each address after this long")
	return uses(cmd)
}

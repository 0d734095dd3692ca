package main

import (
	"fmt"
	"net/http"
	"time"

	"github.com/spf13/cobra"
)

// newProbeCmd is the container's health check: images built FROM scratch
// have no curl, so the binary asks its own /healthz.
func newProbeCmd() *cobra.Command {
	var timeout time.Duration
	cmd := &cobra.Command{
		Use:    "probe URL",
		Short:  "GET URL and exit 0 on a 2xx answer, 1 otherwise (a container health check)",
		Hidden: true,
		Args:   cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c := &http.Client{Timeout: timeout}
			res, err := c.Get(args[0])
			if err != nil {
				return runtimeError(fmt.Errorf("probe: %w", err))
			}
			res.Body.Close()
			if res.StatusCode/100 != 2 {
				return runtimeError(fmt.Errorf("probe %s: %s", args[0], res.Status))
			}
			return nil
		},
	}
	cmd.Flags().DurationVar(&timeout, "timeout", 3*time.Second, "give up after this long")
	return uses(cmd)
}

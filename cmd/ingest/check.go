package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ingestworks/ingest/costs"
	"github.com/ingestworks/ingest/quota"
	"github.com/ingestworks/ingest/report"
)

type checkFlags struct {
	offline bool
}

func newCheckCmd(s *settings) *cobra.Command {
	f := &checkFlags{}
	cmd := &cobra.Command{
		Use:   "check",
		Short: "Check the settings, costs, database, limiter and API key before deploying",
		Long: `check validates what a run would use, one named check a line: the
settings, the costs file, the database, the limiter (reachable, and what it
holds), and, unless --offline, the API key, with one call that costs 1 unit
(videoCategories.list, metered and recorded in the ledger like any other).
check creates no database: on a new host it skips the key and says so,
since a unit spent must be written to the database's ledger; there,
` + "`" + keyCheckRun + "`" + ` checks the key with its first call (a refused key
exits 1 naming YOUTUBE_API_KEY), and check calls it afterwards. Every
skipped check says why.

It prints what it checked and exits 0 when everything is in order, 1 when
a check failed on a fault (a server down or unreachable, a damaged file),
and 2 when a check failed on a usage or configuration error: each failed
check exits as run would on it, and the highest of them wins.`,
		Example: `  ingest check --offline
  YOUTUBE_API_KEY=... REDIS_URL=redis://redis:6379/0 ingest check`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runCheck(cmd.Context(), cmd.OutOrStdout(), s, f) },
	}
	cmd.Flags().BoolVar(&f.offline, "offline", false, "check everything but the key: call nothing upstream, spend nothing")
	return cmd
}

// keyCheckRun is the command that checks the key on a new host, as check
// and the README give it.
const keyCheckRun = "ingest run --once --regions US"

func runCheck(ctx context.Context, out io.Writer, s *settings, f *checkFlags) error {
	c := &checks{Host: s.host(), Offline: f.offline, CostsFile: s.costsFile, Opened: s.warnTerms, Failed: map[string]bool{}}
	c.Words.Window, c.Words.Skew, c.Words.Units = report.ShortDuration, report.SkewText, costs.PoolUnits
	failed, errs := c.Run(ctx, out, c.List(
		func(ctx context.Context) (string, error) { return checkSettings(ctx, s, c) },
		func(ctx context.Context) (string, error) { return checkTerms(ctx, s) }))
	if len(failed) == 0 {
		return nil
	}
	code := exitOK
	for _, err := range errs {
		var ee *exitError // runtimeError gives every error one
		if errors.As(runtimeError(err), &ee) {
			code = max(code, ee.code)
		}
	}
	return &exitError{code: code, err: fmt.Errorf("check: %s failed", strings.Join(failed, ", "))}
}

// checkSettings fails without YOUTUBE_API_KEY, which run needs, unless
// --offline names the quota with INGEST_QUOTA_KEY. The quota key it finds
// lets the limiter be checked even when the API key is missing.
func checkSettings(_ context.Context, s *settings, c *checks) (string, error) {
	k, err := apiKey()
	switch {
	case err == nil:
		c.APIKey = k
		c.QuotaKey = s.resolveQuotaKey(k)
	case s.quotaKey != "":
		c.QuotaKey = s.quotaKey
		if !c.Offline {
			return "", usageErrorf("YOUTUBE_API_KEY is not set: run and backfill need it (check --offline does not)")
		}
	default:
		return "", usageErrorf("YOUTUBE_API_KEY is not set: run and backfill need it, and the quota key is a short hash of it " +
			"(set INGEST_QUOTA_KEY or --quota-key to name the quota without it)")
	}
	limiter := "embedded in the database"
	if s.redisURL != "" {
		limiter = "redis " + quota.Host(s.redisURL)
	}
	endpoint := s.host().EndpointName()
	pub, err := parsePublicURL(publicURLEnv, os.Getenv(publicURLEnv))
	if err != nil {
		return "", err
	}
	site := "public url not set (" + publicURLEnv + " or --public-url of serve and run: without it feeds link relatively, pages name no canonical address, and there is no sitemap)"
	if pub != nil {
		site = "public url " + pub.String()
	}
	return fmt.Sprintf("db %s; limiter %s; endpoint %s; quota key %s; %s", s.dbName(), limiter, endpoint, c.QuotaKey, site), nil
}

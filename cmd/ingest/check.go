package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/ingestworks/ingest/report"
	"github.com/ingestworks/ingest/store"
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
a check failed, 2 on a usage or configuration error.`,
		Example: `  ingest check --offline
  YOUTUBE_API_KEY=... REDIS_URL=redis://redis:6379/0 ingest check`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runCheck(cmd.Context(), cmd.OutOrStdout(), s, f) },
	}
	cmd.Flags().BoolVar(&f.offline, "offline", false, "check everything but the key: call nothing upstream, spend nothing")
	return cmd
}

// namedCheck is one line of `ingest check`. detail says what was found;
// an error fails the check. errSkipped skips it, and detail says why
// (skip builds both).
type namedCheck struct {
	name string
	run  func(ctx context.Context, c *checkEnv) (detail string, err error)
}

var errSkipped = errors.New("skipped")

// skip is a check's answer when it cannot run: why, and what would let it.
func skip(format string, args ...any) (string, error) {
	return fmt.Sprintf(format, args...), errSkipped
}

// checks is every check, in the order they run: later ones may rely on
// what earlier ones found (the limiter needs the database).
func checks() []namedCheck {
	return []namedCheck{
		{"settings", checkSettings},
		{"terms", checkTerms},
		{"costs", checkCosts},
		{"database", checkDatabase},
		{"limiter", checkLimiter},
		{"clock", checkClock},
		{"agreement", checkAgreement},
		{"key", checkKey},
	}
}

// checkEnv is what the checks share.
type checkEnv struct {
	s        *settings
	offline  bool
	apiKey   string
	quotaKey string
	dbState  string // store.Missing, store.Current, store.Older
	failed   map[string]bool
}

func runCheck(ctx context.Context, out io.Writer, s *settings, f *checkFlags) error {
	c := &checkEnv{s: s, offline: f.offline, failed: map[string]bool{}}
	w := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	var problems []string
	code := exitOK
	for _, ch := range checks() {
		detail, err := ch.run(ctx, c)
		status := "ok"
		switch {
		case errors.Is(err, errSkipped):
			status = "skip"
		case err != nil:
			status, detail = "FAIL", err.Error()
			c.failed[ch.name] = true
			problems = append(problems, ch.name)
			code = max(code, codeOf(err))
		}
		fmt.Fprintf(w, "%s\t%s\t%s\n", status, ch.name, detail)
	}
	w.Flush()
	if len(problems) == 0 {
		return nil
	}
	return &exitError{code: code, err: fmt.Errorf("check: %s failed", strings.Join(problems, ", "))}
}

func codeOf(err error) int {
	var ee *exitError
	if errors.As(err, &ee) {
		return ee.code
	}
	return exitRuntime
}

// checkSettings fails without YOUTUBE_API_KEY, which run needs, unless
// --offline names the quota with INGEST_QUOTA_KEY. The quota key it finds
// lets the limiter be checked even when the API key is missing.
func checkSettings(_ context.Context, c *checkEnv) (string, error) {
	k, err := apiKey()
	switch {
	case err == nil:
		c.apiKey = k
		c.quotaKey = c.s.resolveQuotaKey(k)
	case c.s.quotaKey != "":
		c.quotaKey = c.s.quotaKey
		if !c.offline {
			return "", usageErrorf("YOUTUBE_API_KEY is not set: run and backfill need it (check --offline does not)")
		}
	default:
		return "", usageErrorf("YOUTUBE_API_KEY is not set: run and backfill need it, and the quota key is a short hash of it " +
			"(set INGEST_QUOTA_KEY or --quota-key to name the quota without it)")
	}
	limiter := "embedded in the database"
	if c.s.redisURL != "" {
		limiter = "redis " + redisHost(c.s.redisURL)
	}
	endpoint := c.s.endpoint
	if endpoint == "" {
		endpoint = "Google's"
	}
	return fmt.Sprintf("db %s; limiter %s; endpoint %s; quota key %s", c.s.dbName(), limiter, endpoint, c.quotaKey), nil
}

// redisHost is the host part of a Redis URL, never its password.
func redisHost(raw string) string {
	if i := strings.LastIndex(raw, "@"); i >= 0 {
		raw = raw[i+1:]
	} else if j := strings.Index(raw, "://"); j >= 0 {
		raw = raw[j+3:]
	}
	if i := strings.IndexAny(raw, "/?"); i >= 0 {
		raw = raw[:i]
	}
	return raw
}

func checkCosts(_ context.Context, c *checkEnv) (string, error) {
	src := "the built-in costs.yaml"
	if c.s.costsFile != "" {
		src = c.s.costsFile
	}
	var pools []string
	for _, p := range c.s.costs.Pools {
		pools = append(pools, fmt.Sprintf("%s %d-%d/%s", p.Name, p.Limit, p.Reserve, report.ShortDuration(p.Window)))
	}
	return fmt.Sprintf("%s: pools %s; %d operations priced", src, strings.Join(pools, ", "), len(c.s.costs.Operations)), nil
}

// checkDatabase looks at the database without creating or writing it.
func checkDatabase(ctx context.Context, c *checkEnv) (string, error) {
	state, detail, err := store.Inspect(ctx, c.s.db)
	c.dbState = state
	var pe *store.PathError
	if errors.As(err, &pe) {
		return "", usageErrorf("--db (INGEST_DB) %v", pe)
	}
	return detail, runtimeError(err)
}

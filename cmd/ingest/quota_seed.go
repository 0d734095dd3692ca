package main

import (
	"context"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/ingestworks/ingest/internal/envflag"
)

func newQuotaSeedCmd(s *settings) *cobra.Command {
	var ledgers, forget []string
	cmd := &cobra.Command{
		Use:   "seed --ledger DB...",
		Short: "Give the limiter a host moves to the window's calls from the ledgers of every host that spent in it",
		Long: `seed is the step of a move between limiters (docs/operations.md, Growing):
to a shared Redis (--redis / REDIS_URL set), or back to the embedded limiter
in the database (--redis unset). It reads the calls of the last window from
the ledger of each database named (default: --db) and gives them to the
limiter the settings name, each call once however often it is run. On Redis
it also writes this costs file's pools when the key holds none, and ends any
wait of a limiter that could not tell a new Redis from one that lost its data.

Name the database of every host that spent in the window: a call the limiter
is not told of can be spent again. The first run after it fetches at once.

A host that leaves a Redis key other hosts spent on in the window refuses to
run on the embedded limiter until it is given their ledgers here; when they
cannot be had, --forget-peers with the ledger ids the refusal names starts it
without their calls, and the window may be overspent by what they spent.

Each database records which limiter holds its window, and seed is the move
it records: onto Redis for every --ledger named, back to the embedded limiter
for --db. A run on another limiter than the recorded one exits 2, naming it
and this command.`,
		Example: `  REDIS_URL=redis://redis:6379/0 ingest quota seed --ledger ingest.db
  REDIS_URL=redis://redis:6379/0 ingest quota seed --ledger /mnt/a/ingest.db --ledger /mnt/b/ingest.db
  ingest quota seed --ledger ingest.db --ledger /mnt/b/ingest.db     # back to the embedded limiter`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return withLimiter(cmd.Context(), s, true, func(l configLimiter, key string) error {
				if len(forget) > 0 {
					if l.Backend() == "redis" {
						return usageErrorf("--forget-peers: it is for leaving a Redis key for the embedded limiter: unset --redis / REDIS_URL")
					}
					if err := s.host().ForgetPeers(cmd.Context(), key, forget); err != nil {
						return err
					}
				}
				return quotaSeed(cmd.Context(), cmd.OutOrStdout(), s, l, key, ledgers)
			})
		},
	}
	cmd.Flags().StringArrayVar(&ledgers, "ledger", nil, "a database whose ledger the limiter learns the window's calls from; repeat for each host's (default: --db)")
	envflag.With(cmd.Flags().Lookup("ledger"), "INGEST_QUOTA_SEED_LEDGER")
	cmd.Flags().StringSliceVar(&forget, "forget-peers", nil, "leaving Redis: the ledger ids of peers whose calls of the window the embedded limiter starts without, risking overspending by them (as the refusal names them)")
	envflag.With(cmd.Flags().Lookup("forget-peers"), "INGEST_QUOTA_SEED_FORGET_PEERS")
	return cmd
}

func quotaSeed(ctx context.Context, out io.Writer, s *settings, l configLimiter, key string, paths []string) error {
	n, ledgers, err := s.host().Seed(ctx, l, key, paths)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "the %s limiter learned %d calls of the window from %d ledgers\n", l.Backend(), n, ledgers)
	return nil
}

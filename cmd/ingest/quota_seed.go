package main

import (
	"context"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/ingestworks/ingest/custody"
	"github.com/ingestworks/ingest/util/envflag"
)

func newQuotaSeedCmd(s *settings) *cobra.Command {
	var ledgers []string
	var lv custody.Leaving
	cmd := &cobra.Command{
		Use:   "seed --ledger DB...",
		Short: "Give the limiter a host moves to the window's calls from the ledgers of every host that spent in it",
		Long: `seed is the step of a move between limiters (docs/operations/growing.md):
to a shared Redis (--redis / REDIS_URL set), or back to the embedded limiter
in the database (--redis unset). It reads the calls of the last window from
the ledger of each database named (default: --db) and gives them to the
limiter the settings name, each call once however often it is run. On Redis
it also writes this costs file's pools when the key holds none, and ends any
wait of a limiter that could not tell a new Redis from one that lost its data.

Name the database of every host that spent in the window: a call the limiter
is not told of can be spent again. The first run after it fetches at once.

Back from a Redis key, seed asks the Redis it leaves which ledgers spent in
the window: --leaving-redis with the URL the hosts ran with (REDIS_URL, its
password and all, which INGEST_QUOTA_SEED_LEAVING_REDIS keeps off the command
line; it must be the Redis this database ran on), since a host that first
spent there after this one's last run is in no list this database holds. It refuses (exit 2, naming them) while a ledger that spent
in the window is not given with --ledger; when their databases cannot be
had, --forget-peers with the ledger ids the refusal names starts it without
their calls, and the window may be overspent by what they spent. When that
Redis cannot be reached, --leaving-redis-gone says so: seed then knows only
the hosts this database saw, and overspends by the calls of any other.

Each database records which limiter holds its window, and seed is the move
it records: onto Redis for every --ledger named, back to the embedded limiter
for --db. A run on another limiter than the recorded one exits 2, naming it
and this command.`,
		Example: `  REDIS_URL=redis://redis:6379/0 ingest quota seed --ledger ingest.db
  REDIS_URL=redis://redis:6379/0 ingest quota seed --ledger /mnt/a/ingest.db --ledger /mnt/b/ingest.db
  # back to the embedded limiter, REDIS_URL unset:
  INGEST_QUOTA_SEED_LEAVING_REDIS=redis://redis:6379/0 ingest quota seed --ledger ingest.db --ledger /mnt/b/ingest.db`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return withLimiter(cmd.Context(), s, true, func(l configLimiter, key string) error {
				if l.Backend() == "redis" {
					for _, f := range []struct {
						name string
						set  bool
					}{{"--forget-peers", len(lv.Forget) > 0}, {"--leaving-redis", lv.RedisURL != ""}, {"--leaving-redis-gone", lv.Gone}} {
						if f.set {
							return usageErrorf("%s: it is for leaving a Redis key for the embedded limiter: unset --redis / REDIS_URL", f.name)
						}
					}
				}
				return quotaSeed(cmd.Context(), cmd.OutOrStdout(), s, l, key, ledgers, lv)
			})
		},
	}
	cmd.Flags().StringArrayVar(&ledgers, "ledger", nil, "a database whose ledger the limiter learns the window's calls from; repeat for each host's (default: --db)")
	envflag.With(cmd.Flags().Lookup("ledger"), "INGEST_QUOTA_SEED_LEDGER")
	cmd.Flags().StringVar(&lv.RedisURL, "leaving-redis", "", "leaving Redis: the URL of the Redis left (as REDIS_URL was), asked which ledgers spent in the window")
	envflag.With(cmd.Flags().Lookup("leaving-redis"), "INGEST_QUOTA_SEED_LEAVING_REDIS")
	cmd.Flags().BoolVar(&lv.Gone, "leaving-redis-gone", false, "leaving Redis: the Redis left cannot be reached; seed knows only the hosts this database saw, risking overspending by any other")
	envflag.With(cmd.Flags().Lookup("leaving-redis-gone"), "INGEST_QUOTA_SEED_LEAVING_REDIS_GONE")
	cmd.Flags().StringSliceVar(&lv.Forget, "forget-peers", nil, "leaving Redis: the ledger ids of peers whose calls of the window the embedded limiter starts without, risking overspending by them (as the refusal names them)")
	envflag.With(cmd.Flags().Lookup("forget-peers"), "INGEST_QUOTA_SEED_FORGET_PEERS")
	return cmd
}

func quotaSeed(ctx context.Context, out io.Writer, s *settings, l configLimiter, key string, paths []string, lv custody.Leaving) error {
	n, ledgers, err := s.host().Seed(ctx, l, key, paths, lv)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "the %s limiter learned %d calls of the window from %d ledgers\n", l.Backend(), n, ledgers)
	return nil
}

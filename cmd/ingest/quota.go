package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/ingestworks/ingest/ledger"
	"github.com/ingestworks/ingest/quota"
	"github.com/ingestworks/ingest/report"
	"github.com/ingestworks/ingest/util/envflag"
	"github.com/ingestworks/ingest/wiring"
)

func newQuotaCmd(s *settings) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "quota",
		Short: "Show, replace or restore what the shared limiter holds for the quota key",
		Long: `Every worker sharing a quota key must agree on each pool's limit, reserve,
window and day: a worker whose costs file disagrees with what the limiter
holds exits 2 before spending. These commands look at and change what the
limiter holds, on purpose.

The quota key is --quota-key / INGEST_QUOTA_KEY, else the hash of
YOUTUBE_API_KEY, else the one quota key the database's ledger knows.`,
	}
	cmd.AddCommand(&cobra.Command{
		Use:   "show",
		Short: "Print each pool as the limiter holds it, beside this costs file, and any recovery in progress",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return withLimiter(cmd.Context(), s, false, func(l configLimiter, _ string) error { return quotaShow(cmd.Context(), cmd.OutOrStdout(), l) })
		},
	})
	cmd.AddCommand(newQuotaApplyCmd(s))
	var ledgers []string
	var acceptMissing bool
	restore := &cobra.Command{
		Use:   "restore [--ledger DB]... [--accept-missing]",
		Short: "Refill a Redis limiter that lost data from the ledgers at hand, and end its wait",
		Long: `After Redis loses data, the limiter admits nothing metered until every
ledger (each host's database) that spent in the window has put its calls
back, or the window and the current calendar day have passed. restore
refills it from the given databases' ledgers (default: --db) and ends the
wait at once: run it with the database of every host that spent in the last
day, or the limit may be overspent. When the limiter's wait names a ledger
(` + "`ingest quota show`" + ` prints them) that none of the databases given holds,
restore refuses (exit 2) and names each; --accept-missing ends the wait
without them and says how many units of each pool they may have spent
uncounted.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return withLimiter(cmd.Context(), s, false, func(l configLimiter, key string) error {
				return quotaRestore(cmd.Context(), cmd.OutOrStdout(), cmd.ErrOrStderr(), s, l, key, ledgers, acceptMissing)
			})
		},
	}
	restore.Flags().StringArrayVar(&ledgers, "ledger", nil, "a database whose ledger to restore from; repeat for each host's (default: --db)")
	envflag.With(restore.Flags().Lookup("ledger"), "INGEST_QUOTA_RESTORE_LEDGER")
	restore.Flags().BoolVar(&acceptMissing, "accept-missing", false, "end the wait even without a ledger it waits for, leaving what that ledger spent uncounted")
	envflag.With(restore.Flags().Lookup("accept-missing"), "INGEST_QUOTA_RESTORE_ACCEPT_MISSING")
	cmd.AddCommand(restore)
	cmd.AddCommand(newQuotaSeedCmd(s))
	cmd.AddCommand(newQuotaClockCmd(s))
	return cmd
}

// withLimiter opens the limiter of the quota key, and the database when
// there is one (for the ledger's quota key), and runs fn. write opens the
// database for writing: the embedded limiter keeps its settings there.
// configLimiter is what the quota commands need of the limiter: its
// settings, and its state for the recovery it may be in.
type configLimiter interface {
	report.StateReader
	Config(ctx context.Context) ([]quota.PoolConfig, error)
	ApplyConfig(ctx context.Context) ([]quota.ConfigChange, error)
}

func withLimiter(ctx context.Context, s *settings, write bool, fn func(configLimiter, string) error) error {
	db, err := s.host().OpenForLimiter(ctx, write)
	if err != nil {
		return err
	}
	if db != nil {
		defer db.Close()
	}
	key, err := quotaKeyFor(ctx, s, db)
	if err != nil {
		return err
	}
	l, closeLimiter, err := s.host().OpenLimiter(db, key)
	if err != nil {
		return err
	}
	defer closeLimiter()
	return fn(l, key)
}

func quotaKeyFor(ctx context.Context, s *settings, db *wiring.Database) (string, error) {
	if db != nil {
		return reportQuotaKey(ctx, s, db)
	}
	if s.quotaKey != "" {
		return s.quotaKey, nil
	}
	k, err := apiKey()
	if err != nil {
		return "", usageErrorf("no quota key: set --quota-key / INGEST_QUOTA_KEY or YOUTUBE_API_KEY")
	}
	return ledger.KeyHash(k), nil
}

func quotaShow(ctx context.Context, out io.Writer, l configLimiter) error {
	confs, err := l.Config(ctx)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "backend %s\n", l.Backend())
	showPools(out, confs, l.Backend())
	if r, ok := l.(*quota.Redis); ok {
		st, err := r.Status(ctx)
		if err != nil {
			return err
		}
		fmt.Fprint(out, statusText(st))
	}
	return nil
}

// showPools prints each pool as the limiter holds it beside the costs
// file, and how the two stand: a pool the limiter holds nothing for is
// said so, with what will store it, never as agreeing with nothing.
func showPools(out io.Writer, confs []quota.PoolConfig, backend string) {
	created := slices.ContainsFunc(confs, func(c quota.PoolConfig) bool { return c.Limiter != "" })
	for _, c := range confs {
		held, mark := quota.Describe(c.Limiter), "agrees"
		switch {
		case !c.Agrees():
			mark = "DIFFERS: run `ingest quota apply` to replace the limiter's"
		case c.Limiter != "":
		case backend != "redis":
			held, mark = "nothing stored yet", "stored by the pool's first call"
		case created:
			held, mark = "nothing stored", "MISSING beside the other pools: run `ingest quota apply` to write it"
		default:
			held, mark = "nothing stored yet", "written by `ingest quota apply --new` for a new key"
		}
		fmt.Fprintf(out, "pool %-8s limiter:    %s\n", c.Pool, held)
		fmt.Fprintf(out, "%-13s costs file: %s (%s)\n", "", quota.Describe(c.Costs), mark)
	}
}

// applyFlags are quota apply's: the operator's word that the key is new
// (the key typed again), and the other hosts' ledgers it should look at
// first.
type applyFlags struct {
	newKey  string
	ledgers []string
}

// newIntent reads --new: the operator's word that quota key key was never
// used, given by typing the key again. Nothing the limiter keeps after a
// wipe can tell it from a new key (docs/explanation/quota.md), and taking it after a
// wipe lets the calls Redis forgot be spent again, so the safe ways come
// first in the refusal.
func newIntent(typed, key string, span time.Duration) (bool, error) {
	switch {
	case typed == "":
		return false, nil
	case typed == key:
		return true, nil
	case strings.HasPrefix(typed, "-"):
		return false, usageErrorf("quota apply --new: it takes the quota key typed again (--new=KEY), got the flag %s; %s", typed, quota.RestoreFirst(span))
	}
	return false, usageErrorf("quota apply --new=%s: the quota key is %s, not %s: %s; only if it was never used, run `ingest quota apply --new=%s`",
		typed, key, typed, quota.RestoreFirst(span), key)
}

// untypedNew refuses --new given without the quota key, which the flags'
// parser finds before the key is known.
func untypedNew(_ *cobra.Command, err error) error {
	if strings.Contains(err.Error(), "needs an argument: --new") {
		return usageErrorf("quota apply --new: %s; only if the key was never used, type it again: --new=KEY (the key the worker's exit 2 named)", quota.RestoreFirst(0))
	}
	return usageErrorf("%w (see --help)", err)
}

func newQuotaApplyCmd(s *settings) *cobra.Command {
	f := &applyFlags{}
	cmd := &cobra.Command{
		Use:   "apply [--new=QUOTA_KEY] [--ledger DB]...",
		Short: "Create the quota key in the limiter (--new=QUOTA_KEY), or replace its pool settings with this costs file's, and say what changed",
		Long: `apply replaces the limit, reserve, window and day the limiter holds for each
pool with those of the costs file in use (--costs / INGEST_COSTS, else the
built-in one). Workers still running with the old file then exit 2 at their
next check: restart them with the new file.

On a Redis that holds no configuration for the quota key, apply asks what
happened: --new=QUOTA_KEY, the key typed again, says the key was never
used. A key whose Redis lost its data
holds no configuration either, and creating it anew would let the calls it
forgot be spent again; so apply refuses (exit 2), --new or not, when the
limiter still holds anything of the key or a ledger it can see holds calls
of the last day: this database's (--db) and each --ledger. Then run
` + "`ingest quota restore --ledger DB...`" + ` with every host's database, or let the
workers wait. A host that saw none of the ledgers that spent cannot tell a
wiped key from a new one: --new taken after a wipe lets what they spent be
spent again. --new replaces nothing: on a key whose limiter holds another
configuration it is refused (exit 2), and the change is made without it.
The embedded limiter needs no apply.`,
		Example: `  REDIS_URL=redis://redis:6379/0 ingest quota apply --new=3f9a1c     # quota key 3f9a1c, never used
  REDIS_URL=redis://redis:6379/0 ingest quota apply --costs new.yaml`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return withLimiter(cmd.Context(), s, true, func(l configLimiter, key string) error {
				return quotaApply(cmd.Context(), cmd.OutOrStdout(), s, l, key, f)
			})
		},
	}
	cmd.Flags().StringVar(&f.newKey, "new", "", "the `QUOTA_KEY`, typed again: it was never used, create it (refused when the limiter holds another configuration for it,\nor a ledger or the limiter shows it was used; the same configuration again changes nothing)")
	cmd.SetFlagErrorFunc(untypedNew)
	cmd.Flags().StringArrayVar(&f.ledgers, "ledger", nil, "another host's database to look at for calls of the last day before creating the key; repeat for each")
	envflag.With(cmd.Flags().Lookup("new"), "INGEST_QUOTA_APPLY_NEW")
	envflag.With(cmd.Flags().Lookup("ledger"), "INGEST_QUOTA_APPLY_LEDGER")
	return cmd
}

func quotaApply(ctx context.Context, out io.Writer, s *settings, l configLimiter, key string, f *applyFlags) error {
	isNew, err := newIntent(f.newKey, key, s.host().Costs.Span())
	if err != nil {
		return err
	}
	changes, err := s.host().Apply(ctx, l, key, isNew, f.ledgers)
	var past *quota.PastError
	switch {
	case errors.As(err, &past), errors.Is(err, quota.ErrNotApplied):
		return usageErrorf("quota apply: %w", err)
	case err != nil:
		return err
	}
	if len(changes) == 0 {
		fmt.Fprintln(out, "the limiter already holds this costs file's pools: nothing changed")
	}
	for _, c := range changes {
		fmt.Fprintln(out, c)
	}
	return nil
}

func quotaRestore(ctx context.Context, out, errOut io.Writer, s *settings, l configLimiter, key string, paths []string, acceptMissing bool) error {
	r, err := s.host().Restore(ctx, l, key, paths, acceptMissing)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "restored %d calls from %d ledgers; the limiter's wait is over\n", r.Calls, r.Ledgers)
	if len(r.Missing) > 0 {
		var lost []string
		for _, p := range r.Uncounted {
			lost = append(lost, fmt.Sprintf("%s up to %d", p.Pool, p.Units))
		}
		fmt.Fprintf(errOut, "warning: the wait ended without the ledgers %s (--accept-missing): what they spent in the window is uncounted, at most these units per pool: %s\n",
			strings.Join(r.Missing, ", "), strings.Join(lost, ", "))
	}
	return nil
}

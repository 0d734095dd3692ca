package main

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/ingestworks/ingest/fetch"
	"github.com/ingestworks/ingest/quota"
)

func newQuotaClockCmd(s *settings) *cobra.Command {
	var forget bool
	cmd := &cobra.Command{
		Use:   "clock [--forget]",
		Short: "Show the upstream's clock as the ledger recorded it and as it answers now; --forget lifts the recorded reading",
		Long: `The limiter decides nothing while its clock and the upstream's (the Date
header of its answers, recorded in the database's ledger and carried on by
this host's boot clock) disagree by more than its guard. clock prints the
recorded reading beside the upstream's answer now, asked at no quota cost
(` + quota.DateRequest + `).

A refusal on a recorded reading asks the upstream again by itself, and a
right answer replaces the reading. --forget removes the reading at once,
for an upstream that cannot be asked (the next decision asks again).`,
		Example: `  ingest quota clock
  ingest quota clock --forget`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return quotaClock(cmd.Context(), cmd.OutOrStdout(), s, forget)
		},
	}
	cmd.Flags().BoolVar(&forget, "forget", false, "remove the recorded reading of the upstream's clock from the ledger")
	return cmd
}

func quotaClock(ctx context.Context, out io.Writer, s *settings, forget bool) error {
	open := s.host().OpenExisting
	if forget {
		open = s.host().OpenStore
	}
	db, err := open(ctx)
	if err != nil {
		return err
	}
	defer db.Close()
	up := s.host().UpstreamClock(db)
	seen, ok, err := up.Last(ctx)
	if err != nil {
		return err
	}
	if ok {
		fmt.Fprintf(out, "recorded: the upstream's Date %s, seen at %s by this host's clock (skew %s), boot %s\n",
			seen.At.UTC().Format(time.RFC3339), seen.Local.UTC().Format(time.RFC3339), seen.Skew().Round(time.Second), seen.Boot)
	} else {
		fmt.Fprintln(out, "recorded: none (the next decision asks the upstream)")
	}
	at, err := fetch.UpstreamTime(ctx, s.endpoint)
	if err != nil {
		fmt.Fprintf(out, "now: the upstream could not be asked: %v\n", err)
	} else {
		skew := at.Sub(s.now())
		fmt.Fprintf(out, "now: the upstream's Date %s (asked just now at no quota cost), skew %s against this host's clock\n",
			at.UTC().Format(time.RFC3339), skew.Round(time.Second))
		if d := seen.Skew() - skew; ok && (d > quota.DefaultGuard || d < -quota.DefaultGuard) {
			fmt.Fprintf(out, "the recorded reading is %s off the upstream's answer now: the next decision replaces it%s\n",
				d.Abs().Round(time.Second), map[bool]string{false: "; --forget removes it now", true: ""}[forget])
		}
	}
	if !forget {
		return nil
	}
	if err := up.Forget(ctx); err != nil {
		return err
	}
	fmt.Fprintln(out, "forgot the recorded reading: the next decision asks the upstream's clock again")
	return nil
}

package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ingestworks/ingest/clients"
	"github.com/ingestworks/ingest/ratelimit"
	"github.com/ingestworks/ingest/report"
	"github.com/ingestworks/ingest/store"
	"github.com/ingestworks/ingest/util/envflag"
	"github.com/ingestworks/ingest/web/signin"
)

// apiPlansEnv names the plans file of the read API.
const apiPlansEnv = "INGEST_API_PLANS"

func newTokensCmd(s *settings) *cobra.Command {
	var plansFile string
	cmd := &cobra.Command{
		Use:   "tokens",
		Short: "Add, list and revoke the tokens of the read API's clients; make an access token",
		Long: `A token names one client of the read API (ingest serve, /api/v1) and its
plan, one of the plans file's (--api-plans / INGEST_API_PLANS, else the
built-in plans: anonymous, standard). A client sends it as Authorization:
Bearer <token> and is metered against its plan; see docs/api.md.

The database keeps only each token's SHA-256 hash: add prints the token
once, as the last line of its output, and it cannot be shown again. Each is
random, 256 bits.

new-ui-token prints a random token for INGEST_UI_TOKEN, the operator's
access token of serve and run --listen, which is not kept anywhere.`,
	}
	cmd.PersistentFlags().StringVar(&plansFile, "api-plans", "", "plans file of the read API, replacing the built-in plans whole")
	envflag.With(cmd.PersistentFlags().Lookup("api-plans"), apiPlansEnv)
	var plan string
	add := &cobra.Command{
		Use:     "add NAME --plan PLAN",
		Short:   "Make a token for a client on a plan and print it, once",
		Example: `  ingest tokens add acme --plan standard`,
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return tokensAdd(cmd.Context(), s, cmd.OutOrStdout(), plansFile, args[0], plan)
		},
	}
	add.Flags().StringVar(&plan, "plan", "", "the client's plan, one of the plans file's (required)")
	var asJSON bool
	list := &cobra.Command{
		Use:   "list",
		Short: "List the tokens: name, plan, whether serve takes it, created, last used (never the token)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			plans, err := loadAPIPlans(plansFile)
			if err != nil {
				return err
			}
			if !s.host().DBExists() {
				// No database is no tokens; listing creates none. At the
				// default path it is refused, as every read there is.
				if _, err := s.host().OpenIfAny(cmd.Context()); err != nil {
					return err
				}
				s.noneYet()
				return report.Tokens(cmd.OutOrStdout(), nil, plans.Usable, plans.File, asJSON)
			}
			return withTokens(cmd.Context(), s, func(db *store.DB) error {
				return tokensList(cmd.Context(), cmd.OutOrStdout(), db, plans, asJSON)
			})
		},
	}
	list.Flags().BoolVar(&asJSON, "json", false, "print a JSON array")
	revoke := &cobra.Command{
		Use:   "revoke NAME",
		Short: "Revoke a token: its next request is refused (401)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return withTokens(cmd.Context(), s, func(db *store.DB) error { return tokensRevoke(cmd.Context(), cmd.OutOrStdout(), db, args[0]) })
		},
	}
	newUI := &cobra.Command{
		Use:   "new-ui-token",
		Short: "Print a random access token for INGEST_UI_TOKEN (256 bits); it is kept nowhere",
		Long: `new-ui-token prints a random token of 256 bits (43 characters, base64url)
that serve and run --listen take as INGEST_UI_TOKEN, which must have at
least 20 characters and 128 bits of entropy. It opens no database and keeps
the token nowhere: put it straight where the server reads it.`,
		Example: `  export INGEST_UI_TOKEN="$(ingest tokens new-ui-token)"; ingest serve --listen 0.0.0.0:8080
  (umask 077; ingest tokens new-ui-token > ui-token)`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			_, err := fmt.Fprintln(cmd.OutOrStdout(), signin.NewToken())
			return err
		},
	}
	cmd.AddCommand(add, list, revoke, uses(newUI)) // commandEnv names their variables: INGEST_TOKENS_ADD_PLAN
	return cmd
}

// loadAPIPlans reads the plans file, or the built-in one when file is "".
func loadAPIPlans(file string) (*ratelimit.APIPlans, error) {
	if file == "" {
		return ratelimit.DefaultAPIPlans(), nil
	}
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, usageErrorf("--api-plans / %s: %w", apiPlansEnv, err)
	}
	p, err := ratelimit.ParseAPIPlans(file, data)
	if err != nil {
		return nil, usageErrorf("--api-plans: %w", err)
	}
	return p, nil
}

func withTokens(ctx context.Context, s *settings, fn func(*store.DB) error) error {
	db, err := s.host().OpenStore(ctx)
	if err != nil {
		return err
	}
	defer db.Close()
	return fn(db.DB)
}

func tokensAdd(ctx context.Context, s *settings, out io.Writer, plansFile, name, plan string) error {
	plans, err := loadAPIPlans(plansFile)
	if err != nil {
		return err
	}
	if !quotaKeyPattern.MatchString(name) {
		return usageErrorf("tokens add: NAME: want 1-64 letters, digits, '.', '_' or '-', got %q", name)
	}
	if _, ok := plans.Plan(plan); !ok || plan == ratelimit.AnonymousPlan {
		var names []string
		for _, p := range plans.Plans {
			if p.Name != ratelimit.AnonymousPlan {
				names = append(names, p.Name)
			}
		}
		given := fmt.Sprintf("got %q", plan)
		if plan == "" {
			given = "none given"
		}
		return usageErrorf("tokens add --plan: want one of the plans of %s: %s (%s is for callers without a token); %s",
			plans.File, strings.Join(names, ", "), ratelimit.AnonymousPlan, given)
	}
	return withTokens(ctx, s, func(db *store.DB) error {
		tok, err := clients.New(db).AddToken(ctx, name, plan, s.now())
		if errors.Is(err, clients.ErrTokenExists) {
			return usageErrorf("tokens add %s: a token of that name exists: revoke it first, or choose another name", name)
		}
		if err != nil {
			return err
		}
		fmt.Fprintf(out, "token %s on plan %s: send it as Authorization: Bearer <token>; it is shown only now:\n%s\n", name, plan, tok)
		return nil
	})
}

func tokensList(ctx context.Context, out io.Writer, db *store.DB, plans *ratelimit.APIPlans, asJSON bool) error {
	tokens, err := clients.New(db).Tokens(ctx)
	if err != nil {
		return err
	}
	return report.Tokens(out, tokens, plans.Usable, plans.File, asJSON)
}

func tokensRevoke(ctx context.Context, out io.Writer, db *store.DB, name string) error {
	err := clients.New(db).RevokeToken(ctx, name)
	if errors.Is(err, clients.ErrTokenMissing) {
		return usageErrorf("tokens revoke %s: no token of that name (see ingest tokens list)", name)
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "token %s revoked\n", name)
	return nil
}

// Command ingest keeps a local, searchable copy of the YouTube most-popular
// charts without spending more of the upstream's daily quota than it may.
//
//	ingest run      [--once] [--regions US,GB,...] [--every 1h] [--listen ADDR]
//	ingest backfill --region R --since DATE [--until DATE] [--query Q] [--max-units N] [--dry-run]
//	ingest report   [--json]
//	ingest search   QUERY [--region R] [--limit N] [--json]
//	ingest history  VIDEO_ID [--json]
//	ingest chart    REGION [--category C] [--language L] [--at TIME] [--json]
//	ingest prune    --keep DURATION [--json]
//	ingest db       copy --to DST
//	ingest export   --since DATE [--until DATE] [--region R] [--category C] [--format csv|jsonl|parquet] [--out FILE|-]
//	ingest check    [--offline]
//	ingest version  [--json]
//
// Exit status: 0 when every job completed or stopped because the quota said
// no; 1 on runtime errors; 2 on usage and configuration errors, before
// anything is spent or written; 3 for an export whose window held no row.
//
// What is where: the commands, one file each: their flags, checks, --help
// texts, output and exit codes; settings.go (the common settings from one
// table) and settings_checks.go (their checks), open.go (the settings as a
// wiring.Host, and the thin calls that open through it); every command's
// error reaches its exit code in one place (runtimeErrors in main.go).
package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/regions"
	"github.com/ingestworks/ingest/store"

	"github.com/spf13/cobra"

	"github.com/ingestworks/ingest/util/envflag"
	"github.com/ingestworks/ingest/wiring"
)

// Exit codes, as docs/contract.md gives them.
const (
	exitOK      = 0
	exitRuntime = 1
	exitUsage   = 2
	// exitEmpty is an export that wrote its file but found no row to put
	// in it: a scheduler tells a window nothing landed in (the daemon
	// down, a filter that matches nothing) from a success and from an
	// error.
	exitEmpty = 3
)

// exitError carries an exit code up to main.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

// usageErrorf is a usage or configuration error: exit 2.
func usageErrorf(format string, args ...any) error {
	return &exitError{code: exitUsage, err: fmt.Errorf(format, args...)}
}

// runtimeError marks err as a runtime failure: exit 1, or 2 for a
// configuration the wiring refused (wiring.ConfigError). Every command's
// own error goes through it (runtimeErrors); what cobra refuses before a
// command runs stays a usage error.
func runtimeError(err error) error {
	if err == nil {
		return nil
	}
	var ee *exitError
	if errors.As(err, &ee) {
		return err
	}
	var ce *wiring.ConfigError
	if errors.As(err, &ce) {
		return &exitError{code: exitUsage, err: err}
	}
	return &exitError{code: exitRuntime, err: err}
}

func main() {
	os.Exit(execute(context.Background(), os.Args[1:]))
}

func execute(ctx context.Context, args []string) int {
	root := newRoot()
	root.SetArgs(args)
	err := root.ExecuteContext(ctx)
	if err == nil {
		return exitOK
	}
	code := exitUsage // cobra's own errors: unknown flags, commands, missing arguments
	var ee *exitError
	if errors.As(err, &ee) {
		code = ee.code
	}
	// The parser's own errors quote what they were given: a URL given where
	// a command or a flag was expected keeps its password out of them too.
	msg := ingest.ScrubArgs(err.Error(), args)
	if finalFormat(root) == "json" {
		// One JSON object, as every other line: a log shipper parses it.
		newLogger(os.Stderr, "json", slog.LevelError).Error("ingest: "+msg, "exit", code)
	} else {
		fmt.Fprintln(os.Stderr, "ingest:", msg)
	}
	return code
}

// finalFormat is the log format the last line is written in: --log-format
// if given, else INGEST_LOG_FORMAT (read here too: an error found before
// the settings were resolved has not applied it).
func finalFormat(root *cobra.Command) string {
	if f := root.PersistentFlags().Lookup("log-format"); f != nil && f.Changed {
		return f.Value.String()
	}
	return os.Getenv("INGEST_LOG_FORMAT")
}

func newRoot() *cobra.Command {
	s := &settings{}
	root := &cobra.Command{
		Use:   "ingest",
		Short: "Keep a searchable local copy of the YouTube most-popular charts within the daily quota",
		Long: `ingest fetches the most-popular charts of the default regions (` + regions.DefaultText() + `)
on a staggered schedule, stores them in SQLite with a full-text index, and never spends more of the
upstream's daily quota than costs.yaml allows: every process draws from one
exact sliding-window limiter, in Redis (--redis) or in the database itself.

Every setting is a flag with an environment variable (shown as [$NAME] in
each command's --help); the flag wins.
YOUTUBE_API_KEY (environment only) is required by commands that call the
upstream; it is never printed, logged or stored, only a short hash of it.

Exit status: 0 when every job completed or stopped because the quota said no,
1 on runtime errors, 2 on usage and configuration errors, 3 for an export
whose window held no row.`,
		SilenceUsage:  true,
		SilenceErrors: true,
		PersistentPreRunE: func(cmd *cobra.Command, _ []string) error {
			return s.resolve(cmd)
		},
	}
	s.bind(root)
	root.Version = readBuildInfo().String()
	root.SetVersionTemplate("{{.Version}}\n")
	uses(root) // help and completion use no setting
	for _, cmd := range []*cobra.Command{
		uses(newRunCmd(s), usesAll...),
		uses(newBackfillCmd(s), usesAll...),
		uses(newReportCmd(s), useDB, useRedis, useCosts, useQuotaKey, useLog, useTerms),
		uses(newSearchCmd(s), useDB, useTerms),
		uses(newExportCmd(s), useDB, useTerms),
		uses(newHistoryCmd(s), useDB, useTerms),
		uses(newChartCmd(s), useDB, useTerms),
		uses(newPruneCmd(s), useDB, useCosts, useTerms),
		uses(newDBCmd(s), useDB, useCosts, useTerms),
		uses(newCheckCmd(s), usesAll...),
		uses(newQuotaCmd(s), useDB, useRedis, useCosts, useQuotaKey, useLog),
		uses(newServeCmd(s), useDB, useRedis, useCosts, useQuotaKey, useLog, useTerms),
		uses(newPublishCmd(s), useDB, useRedis, useCosts, useQuotaKey, useLog, useTerms),
		uses(newProxyCmd(s), usesAll...),
		uses(newTokensCmd(s), useDB, useLog),
		newVersionCmd(),
		newProbeCmd(),
	} {
		root.AddCommand(envflag.Command(cmd))
	}
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		if name, ok := strings.CutPrefix(err.Error(), "unknown flag: --"); ok {
			if near := envflag.Nearest(c, strings.SplitN(name, "=", 2)[0]); near != "" {
				return usageErrorf("%w: did you mean --%s? (see --help)", err, near)
			}
		}
		return usageErrorf("%w (see --help)", err)
	})
	refuseUnknownSubcommands(root)
	runtimeErrors(root, s)
	wrapHelp(root)
	return root
}

// runtimeErrors passes the error of every command's run through
// runtimeError, so that the commands return errors as they come.
func runtimeErrors(cmd *cobra.Command, s *settings) {
	for _, sub := range cmd.Commands() {
		runtimeErrors(sub, s)
	}
	if run := cmd.RunE; run != nil {
		cmd.RunE = func(c *cobra.Command, args []string) error { return runtimeError(full(damaged(run(c, args), s), s)) }
	}
}

// full says a full disk met by any part of a command (the store, the
// ledger, the limiter), whose driver's words name no file, the one way the
// docs give: the database the settings name, its room, the fix.
func full(err error, s *settings) error {
	if err == nil || s.db == "" {
		return err
	}
	return store.Full(s.dbName(), err)
}

// damaged adds the fix to SQLite's word for a damaged file met by a read
// past the open (a search's index, a report's table), which names no file:
// the database is the one the settings name.
func damaged(err error, s *settings) error {
	if err == nil || !store.Damaged(err) || errors.Is(err, ingest.ErrDamaged) {
		return err
	}
	return fmt.Errorf("%w: %s is damaged: %s", err, s.dbName(), strings.ReplaceAll(store.DamagedFix, "PATH", s.dbName()))
}

// refuseUnknownSubcommands makes every command that only groups others
// (quota) answer a word it does not know as the root does: exit 2, naming
// it. Cobra would print the help and exit 0, so a script's typo passes.
func refuseUnknownSubcommands(cmd *cobra.Command) {
	for _, sub := range cmd.Commands() {
		refuseUnknownSubcommands(sub)
	}
	if cmd == cmd.Root() || !cmd.HasSubCommands() || cmd.Run != nil || cmd.RunE != nil {
		return
	}
	cmd.Args = cobra.ArbitraryArgs
	cmd.RunE = func(c *cobra.Command, args []string) error {
		if len(args) == 0 {
			return c.Help()
		}
		return usageErrorf("unknown command %q for %q (see %s --help)", args[0], c.CommandPath(), c.CommandPath())
	}
}

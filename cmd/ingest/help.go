package main

import (
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/ingestworks/ingest/util/termtext"
)

// helpWidth is the widest line of a command's long help: it fits an
// 80-column terminal with room for cobra's own margins.
const helpWidth = 78

// wrapHelp reflows every command's long help by one rule, so that the
// texts are written for meaning and not measured by hand: paragraphs are
// separated by a blank line and filled to helpWidth; a line that starts
// with a space (an example, a table) is kept as written. A command with
// no long help shows its short one, filled the same way.
func wrapHelp(cmd *cobra.Command) {
	if cmd == cmd.Root() {
		wrapFlags(cmd)
	}
	long := cmd.Long
	if long == "" {
		long = cmd.Short
	}
	cmd.Long = termtext.Fill(long, helpWidth)
	for _, sub := range cmd.Commands() {
		wrapHelp(sub)
	}
}

// The template function is registered once, when the package starts:
// cobra keeps its template functions in one map of its own, unguarded, and
// a command tree may be built more than once at a time.
func init() {
	cobra.AddTemplateFunc("wrappedFlags", func(fs *pflag.FlagSet) string {
		return strings.TrimRight(fs.FlagUsagesWrapped(helpWidth+2), " \n")
	})
}

// wrapFlags fills the flags' help to the width of the long help, its
// descriptions in a column of their own, instead of one line a flag.
func wrapFlags(root *cobra.Command) {
	t := root.UsageTemplate()
	for _, set := range []string{"LocalFlags", "InheritedFlags"} {
		t = strings.ReplaceAll(t, "{{."+set+".FlagUsages | trimTrailingWhitespaces}}", "{{wrappedFlags ."+set+"}}")
	}
	root.SetUsageTemplate(t)
}

package main

import (
	"github.com/spf13/cobra"

	"github.com/ingestworks/ingest/internal/termtext"
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
	long := cmd.Long
	if long == "" {
		long = cmd.Short
	}
	cmd.Long = termtext.Fill(long, helpWidth)
	for _, sub := range cmd.Commands() {
		wrapHelp(sub)
	}
}

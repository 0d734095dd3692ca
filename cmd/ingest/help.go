package main

import (
	"strings"
	"unicode/utf8"

	"github.com/spf13/cobra"
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
	cmd.Long = fill(long, helpWidth)
	for _, sub := range cmd.Commands() {
		wrapHelp(sub)
	}
}

// fill reflows text's paragraphs to at most width runes a line (a word
// longer than that has a line of its own).
func fill(text string, width int) string {
	var out, para []string
	flush := func() {
		if len(para) > 0 {
			out = append(out, fillParagraph(strings.Fields(strings.Join(para, " ")), width)...)
			para = nil
		}
	}
	for _, line := range strings.Split(strings.TrimSpace(text), "\n") {
		switch {
		case strings.TrimSpace(line) == "":
			flush()
			out = append(out, "")
		case line[0] == ' ' || line[0] == '\t':
			flush()
			out = append(out, strings.TrimRight(line, " \t"))
		default:
			para = append(para, line)
		}
	}
	flush()
	return strings.Join(out, "\n")
}

func fillParagraph(words []string, width int) []string {
	var lines []string
	line := ""
	for _, w := range words {
		switch {
		case line == "":
			line = w
		case utf8.RuneCountInString(line)+1+utf8.RuneCountInString(w) <= width:
			line += " " + w
		default:
			lines = append(lines, line)
			line = w
		}
	}
	if line != "" {
		lines = append(lines, line)
	}
	return lines
}

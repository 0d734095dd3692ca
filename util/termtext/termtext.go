// Package termtext lays text out for a terminal, as the commands print
// it: help reflowed to a width, counts with their thousands grouped, and
// counts over time as a sparkline of block characters.
package termtext

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// Fill reflows text's paragraphs to at most width runes a line (a word
// longer than that has a line of its own). Paragraphs are separated by a
// blank line; a line that starts with a space or a tab (an example, a
// table) is kept as written.
func Fill(text string, width int) string {
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

// Thousands writes n with its thousands grouped by commas: 1,234,567.
func Thousands(n int64) string {
	s := fmt.Sprint(n)
	for i := len(s) - 3; i > 0 && s[i-1] != '-'; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

var sparks = []rune("▁▂▃▄▅▆▇█")

// Sparkline draws counts in at most width characters, each the last count
// of its share of them, scaled from the lowest to the highest; "" when
// there are none.
func Sparkline(counts []int64, width int) string {
	n := min(width, len(counts))
	if n <= 0 {
		return ""
	}
	vals := make([]int64, n)
	for i := range vals {
		vals[i] = counts[(i+1)*len(counts)/n-1]
	}
	lo, hi := vals[0], vals[0]
	for _, v := range vals {
		lo, hi = min(lo, v), max(hi, v)
	}
	var b strings.Builder
	for _, v := range vals {
		k := 0
		if hi > lo {
			k = int((v - lo) * int64(len(sparks)-1) / (hi - lo))
		}
		b.WriteRune(sparks[k])
	}
	return b.String()
}

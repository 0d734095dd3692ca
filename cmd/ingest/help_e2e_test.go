package main

import (
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/ingestworks/ingest/regions"
)

// Every command's long help follows one wrapping rule: paragraphs filled
// to helpWidth, no line longer, none that had room for the next word.
func TestHelpTextIsWrappedByOneRule(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	seen := 0
	var walk func(path []string)
	walk = func(path []string) {
		res := h.mustRun(0, append(path, "--help")...)
		seen++
		long, _, _ := strings.Cut(res.stdout, "\nUsage:")
		lines := strings.Split(strings.TrimRight(long, "\n"), "\n")
		for i, line := range lines {
			n := utf8.RuneCountInString(line)
			if n > helpWidth {
				t.Errorf("ingest %s --help: line %d is %d wide, over %d: %q", strings.Join(path, " "), i+1, n, helpWidth, line)
			}
			if line == "" || line[0] == ' ' || i+1 == len(lines) || lines[i+1] == "" || lines[i+1][0] == ' ' {
				continue
			}
			next, _, _ := strings.Cut(lines[i+1], " ")
			if n+1+utf8.RuneCountInString(next) <= helpWidth {
				t.Errorf("ingest %s --help: line %d ends early (%q fits after %q)", strings.Join(path, " "), i+1, next, line)
			}
		}
		for _, section := range []string{"\nFlags:\n", "\nGlobal Flags:\n"} {
			_, flags, _ := strings.Cut(res.stdout, section)
			flags, _, _ = strings.Cut(flags, "\n\n")
			for _, line := range strings.Split(flags, "\n") {
				if n := utf8.RuneCountInString(line); n > helpWidth+2 {
					t.Errorf("ingest %s --help: a flag's line is %d wide, over %d: %q", strings.Join(path, " "), n, helpWidth+2, line)
				}
			}
		}
		for _, sub := range helpCommands(res.stdout) {
			walk(append(append([]string{}, path...), sub))
		}
	}
	walk(nil)
	if seen < 10 {
		t.Errorf("walked %d commands' help, want every command", seen)
	}
}

// helpCommands are the commands a --help lists under Available Commands,
// but help and completion, which cobra writes.
func helpCommands(help string) []string {
	_, list, ok := strings.Cut(help, "Available Commands:\n")
	if !ok {
		return nil
	}
	var out []string
	for _, line := range strings.Split(list, "\n") {
		f := strings.Fields(line)
		if len(f) == 0 || !strings.HasPrefix(line, "  ") {
			break
		}
		if f[0] != "help" && f[0] != "completion" {
			out = append(out, f[0])
		}
	}
	return out
}

// The help that speaks of the default regions names each of them, from the
// one list: ingest --help, and run --help for --regions.
func TestHelpNamesEveryDefaultRegion(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	for _, path := range [][]string{{"--help"}, {"run", "--help"}} {
		help := h.mustRun(0, path...).stdout
		for _, r := range regions.Default {
			if !regexp.MustCompile(`\b` + r + `\b`).MatchString(help) {
				t.Errorf("ingest %s does not name default region %s:\n%s", strings.Join(path, " "), r, help)
			}
		}
	}
}

package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/ingestworks/ingest/util/envflag"
)

var update = flag.Bool("update", false, "write docs/reference/cli/ from the command tree")

// cliDir is where the commands' reference pages are, one per command.
var cliDir = filepath.Join("..", "..", "docs", "reference", "cli")

const regenerate = "go test ./cmd/ingest -run TestCLIReference -update"

// cliPages is the reference of every command, made from the command tree:
// its --help exactly as the binary prints it, then a table of its flags
// with each one's variable and default, and links to its subcommands.
func cliPages(t *testing.T) map[string][]byte {
	t.Helper()
	pages := map[string][]byte{}
	var index bytes.Buffer
	index.WriteString("# Commands\n\n" + generatedNote + "\n\nEvery command, its flags and the variable of each flag " +
		"(a flag wins over its variable; docs/contract.md, Settings):\n\n")
	var walk func(path []string)
	walk = func(path []string) {
		root := newRoot()
		cmd, _, err := root.Find(path)
		if err != nil {
			t.Fatalf("%v: %v", path, err)
		}
		name := cliPageName(cmd)
		fmt.Fprintf(&index, "- [%s](%s): %s\n", cmd.CommandPath(), name, cmd.Short)
		pages[name] = cliPage(t, cmd, helpText(t, path))
		for _, sub := range cmd.Commands() {
			if sub.IsAvailableCommand() && sub.Name() != "help" && sub.Name() != "completion" {
				walk(append(slices.Clone(path), sub.Name()))
			}
		}
	}
	walk(nil)
	pages["README.md"] = index.Bytes()
	return pages
}

const generatedNote = "<!-- Made from the command tree by `" + regenerate + "`: edit the command's help in cmd/ingest, not this page. -->"

func cliPageName(cmd *cobra.Command) string {
	return strings.ReplaceAll(cmd.CommandPath(), " ", "_") + ".md"
}

// helpText is what `ingest PATH --help` prints, from a tree of its own.
func helpText(t *testing.T, path []string) string {
	t.Helper()
	root := newRoot()
	var out bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&out)
	root.SetArgs(append(slices.Clone(path), "--help"))
	if err := root.Execute(); err != nil {
		t.Fatalf("ingest %s --help: %v", strings.Join(path, " "), err)
	}
	return out.String()
}

func cliPage(t *testing.T, cmd *cobra.Command, help string) []byte {
	t.Helper()
	var b bytes.Buffer
	fmt.Fprintf(&b, "# %s\n\n%s\n\n%s.\n\n", cmd.CommandPath(), generatedNote, strings.TrimSuffix(cmd.Short, "."))
	fmt.Fprintf(&b, "## `%s --help`\n\n```text\n%s```\n", cmd.CommandPath(), help)
	var rows []string
	visit := func(f *pflag.Flag) {
		if f.Hidden || f.Name == "help" || f.Name == "version" {
			return
		}
		env := "(none)"
		if v := f.Annotations[envflag.Annotation]; len(v) > 0 {
			env = "`" + v[0] + "`"
		}
		def := f.DefValue
		if def == "" || def == "[]" {
			def = "(none)"
		} else {
			def = "`" + def + "`"
		}
		rows = append(rows, fmt.Sprintf("| `--%s` | %s | %s |", f.Name, env, def))
	}
	cmd.NonInheritedFlags().VisitAll(visit)
	if len(rows) > 0 {
		b.WriteString("\n## Flags and variables\n\n| flag | variable | default |\n|---|---|---|\n")
		b.WriteString(strings.Join(rows, "\n") + "\n")
	}
	if cmd.HasParent() {
		fmt.Fprintf(&b, "\nThe settings every command shares: [%s](%s).\n", cmd.Root().Name(), cliPageName(cmd.Root()))
	}
	var subs []string
	for _, sub := range cmd.Commands() {
		if sub.IsAvailableCommand() && sub.Name() != "help" && sub.Name() != "completion" {
			subs = append(subs, fmt.Sprintf("- [%s](%s): %s", sub.CommandPath(), cliPageName(sub), sub.Short))
		}
	}
	if len(subs) > 0 {
		b.WriteString("\n## Commands\n\n" + strings.Join(subs, "\n") + "\n")
	}
	return b.Bytes()
}

// The commands' reference in docs/reference/cli is the command tree's:
// each page holds its command's --help as the binary prints it and every
// flag's variable and default, and there is a page for every command and
// none for a command that is gone. -update writes them.
func TestCLIReference(t *testing.T) {
	want := cliPages(t)
	if *update {
		if err := os.RemoveAll(cliDir); err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(cliDir, 0o755); err != nil {
			t.Fatal(err)
		}
		for name, b := range want {
			if err := os.WriteFile(filepath.Join(cliDir, name), b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	have, err := filepath.Glob(filepath.Join(cliDir, "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, path := range have {
		if _, ok := want[filepath.Base(path)]; !ok {
			t.Errorf("docs/reference/cli/%s names no command: run `%s`", filepath.Base(path), regenerate)
		}
	}
	for name, b := range want {
		got, err := os.ReadFile(filepath.Join(cliDir, name))
		if err != nil {
			t.Errorf("docs/reference/cli/%s: %v: run `%s`", name, err, regenerate)
			continue
		}
		if !bytes.Equal(got, b) {
			t.Errorf("docs/reference/cli/%s is not what the command tree says (%s): run `%s`", name, firstDifference(got, b), regenerate)
		}
	}
}

// firstDifference names the first line two texts differ on.
func firstDifference(got, want []byte) string {
	g, w := strings.Split(string(got), "\n"), strings.Split(string(want), "\n")
	for i := range max(len(g), len(w)) {
		var a, b string
		if i < len(g) {
			a = g[i]
		}
		if i < len(w) {
			b = w[i]
		}
		if a != b {
			return fmt.Sprintf("line %d: the page says %q, the tree %q", i+1, a, b)
		}
	}
	return "same lines"
}

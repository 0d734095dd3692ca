// Package envflag ties each flag of a cobra command tree to one
// environment variable, named by one rule, and tells an operator about the
// INGEST_* variables that name no setting (a renamed one, a typo).
package envflag

import (
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// Every flag has exactly one environment variable, named by one rule
// (docs/contract.md, Settings): a setting several commands share is
// INGEST_<FLAG> (the common settings of cmd/ingest/settings.go's table, --keep,
// --api-plans), but for REDIS_URL and YOUTUBE_ENDPOINT, the names their
// ecosystems use; every other flag is its command's,
// INGEST_<COMMAND>_<FLAG>, the command being its whole path below the root
// (INGEST_RUN_EVERY, INGEST_TOKENS_ADD_PLAN). Names a flag had before
// (OldAnnotation) are still read for one release, with a warning.
const (
	// Annotation is the flag's annotation that holds its variable.
	Annotation = "env"
	// OldAnnotation holds the names it had before, still read.
	OldAnnotation = "env-old"
	// fromAnnotation is the variable Apply set a flag from.
	fromAnnotation = "env-from"
)

// With ties flag f to the environment variable env and lists it in the
// flag's help.
func With(f *pflag.Flag, env string) {
	if f.Annotations == nil {
		f.Annotations = map[string][]string{}
	}
	f.Annotations[Annotation] = []string{env}
	f.Usage += " [$" + env + "]"
}

// Old lets flag f still be read from a name it had before its variable
// followed the rule, warning that it is to be renamed.
func Old(f *pflag.Flag, names ...string) {
	if f.Annotations == nil {
		f.Annotations = map[string][]string{}
	}
	f.Annotations[OldAnnotation] = append(f.Annotations[OldAnnotation], names...)
}

// Command gives every local flag of cmd and of its subcommands that has
// no variable yet the variable INGEST_<COMMAND>_<FLAG>, so that a
// container or a unit file can set any of them without a command line.
func Command(cmd *cobra.Command) *cobra.Command {
	nameAll(cmd, "INGEST_"+Name(cmd.Name())+"_")
	return cmd
}

func nameAll(cmd *cobra.Command, prefix string) {
	cmd.LocalNonPersistentFlags().VisitAll(func(f *pflag.Flag) {
		if _, ok := f.Annotations[Annotation]; ok {
			return
		}
		With(f, prefix+Name(f.Name))
		if short := "INGEST_" + Name(cmd.Name()) + "_" + Name(f.Name); short != prefix+Name(f.Name) {
			// The name these flags had before they followed the
			// command's path (INGEST_ADD_PLAN).
			Old(f, short)
		}
	})
	for _, sub := range cmd.Commands() {
		nameAll(sub, prefix+Name(sub.Name())+"_")
	}
}

// Name is a flag's or command's name as a variable's part: --run-every
// RUN_EVERY.
func Name(s string) string { return strings.ToUpper(strings.ReplaceAll(s, "-", "_")) }

// Apply sets every flag of cmd that was not given on the command line
// from its environment variable, when that is set, else from a name it had
// before; a value the flag refuses is an error naming the variable and the
// flag.
func Apply(cmd *cobra.Command) error {
	var err error
	cmd.Flags().VisitAll(func(f *pflag.Flag) {
		if err != nil || f.Changed {
			return
		}
		name, v, ok := lookupEnv(append(slices.Clone(f.Annotations[Annotation]), f.Annotations[OldAnnotation]...))
		if !ok {
			return
		}
		// Set through the flag set, so that the flag counts as given.
		if serr := cmd.Flags().Set(f.Name, v); serr != nil {
			err = fmt.Errorf("%s (for --%s): %v", name, f.Name, serr)
		}
		f.Annotations[fromAnnotation] = []string{name}
	})
	return err
}

// Given names where flag f's value came from, for a message about it: the
// variable Apply set it from ("INGEST_SERVE_LISTEN (for --listen)"), else
// the flag.
func Given(f *pflag.Flag) string {
	if from := f.Annotations[fromAnnotation]; len(from) > 0 {
		return from[0] + " (for --" + f.Name + ")"
	}
	return "--" + f.Name
}

func lookupEnv(names []string) (name, value string, ok bool) {
	for _, name := range names {
		if v, ok := os.LookupEnv(name); ok {
			return name, v, true
		}
	}
	return "", "", false
}

// Flag is one flag's variable, with where the flag is.
type Flag struct {
	Path []string // the command's names below the root; none for the root's
	Flag string
	Env  string
	Old  []string
}

func (e Flag) String() string {
	return strings.TrimSpace("ingest "+strings.Join(e.Path, " ")) + " --" + e.Flag
}

// Flags is every flag of the tree under root that has a variable.
func Flags(root *cobra.Command) []Flag {
	var out []Flag
	var walk func(cmd *cobra.Command, path []string)
	walk = func(cmd *cobra.Command, path []string) {
		visit := func(f *pflag.Flag) {
			if env := f.Annotations[Annotation]; len(env) > 0 {
				out = append(out, Flag{Path: path, Flag: f.Name, Env: env[0], Old: f.Annotations[OldAnnotation]})
			}
		}
		cmd.LocalNonPersistentFlags().VisitAll(visit)
		cmd.PersistentFlags().VisitAll(visit)
		for _, sub := range cmd.Commands() {
			walk(sub, append(slices.Clone(path), sub.Name()))
		}
	}
	walk(root, nil)
	return out
}

// Note is an INGEST_* variable set in the environment that is not a
// setting's name: an old name still read (renamed), or one nobody reads.
type Note struct {
	Name    string
	Renamed bool
	Want    string // the name to use instead
	For     string // renamed: the flag it sets
}

func (n Note) String() string {
	if n.Renamed {
		return fmt.Sprintf("%s is read for %s until the next release: rename it %s", n.Name, n.For, n.Want)
	}
	if n.Want == "" {
		return fmt.Sprintf("%s is not a setting of ingest and is ignored (no setting's name is near it: `ingest --help` names each flag's variable)", n.Name)
	}
	return fmt.Sprintf("%s is not a setting of ingest and is ignored: did you mean %s?", n.Name, n.Want)
}

// Notes lists the INGEST_* variables of environ that name no setting of
// the tree under root nor one of only (the variables read with no flag),
// with the name each should be.
func Notes(root *cobra.Command, environ, only []string) []Note {
	flags := Flags(root)
	current := map[string]bool{}
	for _, e := range only {
		current[e] = true
	}
	old := map[string]Flag{}
	for _, f := range flags {
		current[f.Env] = true
		for _, o := range f.Old {
			old[o] = f
		}
	}
	var out []Note
	for _, kv := range environ {
		name, _, _ := strings.Cut(kv, "=")
		if !strings.HasPrefix(name, "INGEST_") || current[name] {
			continue
		}
		if f, ok := old[name]; ok {
			out = append(out, Note{Name: name, Renamed: true, Want: f.Env, For: f.String()})
			continue
		}
		out = append(out, Note{Name: name, Want: closestEnv(name, flags, only)})
	}
	slices.SortFunc(out, func(a, b Note) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// closestEnv is the setting an unknown variable most likely meant: a flag
// it names by another spelling of the rule (INGEST_RUN_KEEP for
// INGEST_KEEP, INGEST_EVERY for INGEST_RUN_EVERY), else the variable
// nearest in letters (INGEST_RUN_EVRY, INGEST_UI_TOKEN for
// INGEST_UI_TOKEN_FILE), the variables read with no flag (only) included;
// the nearest in letters among several; "" when none is near enough to be
// what was meant (a third of the name's letters or more to change).
func closestEnv(name string, flags []Flag, only []string) string {
	spellings := map[string]map[string]bool{}
	add := func(s, env string) {
		if spellings[s] == nil {
			spellings[s] = map[string]bool{}
		}
		spellings[s][env] = true
	}
	for _, f := range flags {
		add("INGEST_"+Name(f.Flag), f.Env)
		for i := range f.Path {
			add("INGEST_"+Name(strings.Join(f.Path[i:], "_"))+"_"+Name(f.Flag), f.Env)
		}
	}
	candidates := spellings[name] // a flag several commands have: the nearest of its variables
	if len(candidates) == 0 {
		candidates = map[string]bool{}
		for _, f := range flags {
			candidates[f.Env] = true
		}
		for _, env := range only {
			candidates[env] = true
		}
	}
	best, bestD := "", -1
	for env := range candidates {
		if d := editDistance(name, env); bestD < 0 || d < bestD || (d == bestD && env < best) {
			best, bestD = env, d
		}
	}
	if len(spellings[name]) == 0 && bestD*3 > len(strings.TrimPrefix(name, "INGEST_"))+3 {
		return ""
	}
	return best
}

// Nearest is the flag of cmd a mistyped one most likely meant (--region
// for --regions, --evry for --every): the nearest in letters, at most two
// edits away or a prefix of it; "" for none.
func Nearest(cmd *cobra.Command, name string) string {
	best, bestD := "", 3
	cmd.Flags().VisitAll(func(f *pflag.Flag) {
		d := editDistance(name, f.Name)
		if strings.HasPrefix(f.Name, name) || strings.HasPrefix(name, f.Name) {
			d = min(d, 1)
		}
		if f.Hidden || d >= bestD || (d == bestD && f.Name > best) {
			return
		}
		best, bestD = f.Name, d
	})
	return best
}

// editDistance is Levenshtein's distance between a and b, in bytes.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur := make([]int, len(b)+1)
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			sub := prev[j-1]
			if a[i-1] != b[j-1] {
				sub++
			}
			cur[j] = min(sub, prev[j]+1, cur[j-1]+1)
		}
		prev = cur
	}
	return prev[len(b)]
}

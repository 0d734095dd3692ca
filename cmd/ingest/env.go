package main

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
// INGEST_<FLAG> (the common settings of settings.go's table, --keep,
// --api-plans), but for REDIS_URL and YOUTUBE_ENDPOINT, the names their
// ecosystems use; every other flag is its command's,
// INGEST_<COMMAND>_<FLAG>, the command being its whole path below the root
// (INGEST_RUN_EVERY, INGEST_TOKENS_ADD_PLAN). Names a flag had before
// (oldEnvAnnotation) are still read for one release, with a warning.
const (
	envAnnotation    = "env"
	oldEnvAnnotation = "env-old"
)

// withEnv ties flag f to the environment variable env and lists it in the
// flag's help.
func withEnv(f *pflag.Flag, env string) {
	if f.Annotations == nil {
		f.Annotations = map[string][]string{}
	}
	f.Annotations[envAnnotation] = []string{env}
	f.Usage += " [$" + env + "]"
}

// oldEnv lets flag f still be read from a name it had before its variable
// followed the rule, warning that it is to be renamed.
func oldEnv(f *pflag.Flag, names ...string) {
	if f.Annotations == nil {
		f.Annotations = map[string][]string{}
	}
	f.Annotations[oldEnvAnnotation] = append(f.Annotations[oldEnvAnnotation], names...)
}

// commandEnv gives every local flag of cmd and of its subcommands that has
// no variable yet the variable INGEST_<COMMAND>_<FLAG>, so that a
// container or a unit file can set any of them without a command line.
func commandEnv(cmd *cobra.Command) *cobra.Command {
	nameEnv(cmd, "INGEST_"+envName(cmd.Name())+"_")
	return cmd
}

func nameEnv(cmd *cobra.Command, prefix string) {
	cmd.LocalNonPersistentFlags().VisitAll(func(f *pflag.Flag) {
		if _, ok := f.Annotations[envAnnotation]; ok {
			return
		}
		withEnv(f, prefix+envName(f.Name))
		if short := "INGEST_" + envName(cmd.Name()) + "_" + envName(f.Name); short != prefix+envName(f.Name) {
			// The name these flags had before they followed the
			// command's path (INGEST_ADD_PLAN).
			oldEnv(f, short)
		}
	})
	for _, sub := range cmd.Commands() {
		nameEnv(sub, prefix+envName(sub.Name())+"_")
	}
}

func envName(s string) string { return strings.ToUpper(strings.ReplaceAll(s, "-", "_")) }

// applyEnv sets every flag of cmd that was not given on the command line
// from its environment variable, when that is set, else from a name it had
// before.
func applyEnv(cmd *cobra.Command) error {
	var err error
	cmd.Flags().VisitAll(func(f *pflag.Flag) {
		if err != nil || f.Changed {
			return
		}
		name, v, ok := lookupEnv(append(slices.Clone(f.Annotations[envAnnotation]), f.Annotations[oldEnvAnnotation]...))
		if !ok {
			return
		}
		// Set through the flag set, so that the flag counts as given.
		if serr := cmd.Flags().Set(f.Name, v); serr != nil {
			err = usageErrorf("%s (for --%s): %v", name, f.Name, serr)
		}
	})
	return err
}

func lookupEnv(names []string) (name, value string, ok bool) {
	for _, name := range names {
		if v, ok := os.LookupEnv(name); ok {
			return name, v, true
		}
	}
	return "", "", false
}

// envOnly are the variables read with no flag: secrets stay out of
// command lines.
var envOnly = []string{"YOUTUBE_API_KEY", uiTokenEnv}

// envFlag is one flag's variable, with where the flag is.
type envFlag struct {
	path []string // the command's names below the root; none for the root's
	flag string
	env  string
	old  []string
}

func (e envFlag) String() string {
	return strings.TrimSpace("ingest "+strings.Join(e.path, " ")) + " --" + e.flag
}

// envFlags is every flag of the tree under root that has a variable.
func envFlags(root *cobra.Command) []envFlag {
	var out []envFlag
	var walk func(cmd *cobra.Command, path []string)
	walk = func(cmd *cobra.Command, path []string) {
		visit := func(f *pflag.Flag) {
			if env := f.Annotations[envAnnotation]; len(env) > 0 {
				out = append(out, envFlag{path: path, flag: f.Name, env: env[0], old: f.Annotations[oldEnvAnnotation]})
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

// envNote is an INGEST_* variable set in the environment that is not a
// setting's name: an old name still read (renamed), or one nobody reads.
type envNote struct {
	name    string
	renamed bool
	want    string // the name to use instead
	flag    string // renamed: the flag it sets
}

func (n envNote) String() string {
	if n.renamed {
		return fmt.Sprintf("%s is read for %s until the next release: rename it %s", n.name, n.flag, n.want)
	}
	return fmt.Sprintf("%s is not a setting of ingest and is ignored: did you mean %s?", n.name, n.want)
}

// envNotes lists the INGEST_* variables of environ that name no setting
// of the tree under root, with the name each should be.
func envNotes(root *cobra.Command, environ []string) []envNote {
	flags := envFlags(root)
	current := map[string]bool{}
	for _, e := range envOnly {
		current[e] = true
	}
	old := map[string]envFlag{}
	for _, f := range flags {
		current[f.env] = true
		for _, o := range f.old {
			old[o] = f
		}
	}
	var out []envNote
	for _, kv := range environ {
		name, _, _ := strings.Cut(kv, "=")
		if !strings.HasPrefix(name, "INGEST_") || current[name] {
			continue
		}
		if f, ok := old[name]; ok {
			out = append(out, envNote{name: name, renamed: true, want: f.env, flag: f.String()})
			continue
		}
		out = append(out, envNote{name: name, want: closestEnv(name, flags)})
	}
	slices.SortFunc(out, func(a, b envNote) int { return strings.Compare(a.name, b.name) })
	return out
}

// closestEnv is the setting an unknown variable most likely meant: a flag
// it names by another spelling of the rule (INGEST_RUN_KEEP for
// INGEST_KEEP, INGEST_EVERY for INGEST_RUN_EVERY), else the variable
// nearest in letters (INGEST_RUN_EVRY); the nearest in letters among
// several.
func closestEnv(name string, flags []envFlag) string {
	spellings := map[string]map[string]bool{}
	add := func(s, env string) {
		if spellings[s] == nil {
			spellings[s] = map[string]bool{}
		}
		spellings[s][env] = true
	}
	for _, f := range flags {
		add("INGEST_"+envName(f.flag), f.env)
		for i := range f.path {
			add("INGEST_"+envName(strings.Join(f.path[i:], "_"))+"_"+envName(f.flag), f.env)
		}
	}
	candidates := spellings[name] // a flag several commands have: the nearest of its variables
	if len(candidates) == 0 {
		candidates = map[string]bool{}
		for _, f := range flags {
			candidates[f.env] = true
		}
	}
	best, bestD := "", -1
	for env := range candidates {
		if d := editDistance(name, env); bestD < 0 || d < bestD || (d == bestD && env < best) {
			best, bestD = env, d
		}
	}
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

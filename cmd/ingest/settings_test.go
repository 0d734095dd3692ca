package main

import (
	"slices"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// conventional are the settings whose variables keep the names their
// ecosystems use instead of INGEST_<FLAG> (docs/contract.md, Settings).
var conventional = map[string]string{"redis": "REDIS_URL", "youtube-endpoint": "YOUTUBE_ENDPOINT"}

// One rule names every flag's variable, over every command: a setting
// several commands share is INGEST_<FLAG> (the root's, and a flag that
// more than one command declares under that one name), every other flag
// INGEST_<COMMAND PATH>_<FLAG>; each flag has exactly one variable, and no
// variable sets two different flags.
func TestEverySettingFollowsTheRule(t *testing.T) {
	root := newRoot()
	var all []envFlag
	var walk func(cmd *cobra.Command, path []string)
	walk = func(cmd *cobra.Command, path []string) {
		visit := func(f *pflag.Flag) {
			if f.Name == "help" || f.Name == "version" {
				return
			}
			env := f.Annotations[envAnnotation]
			if len(env) != 1 {
				t.Errorf("%s --%s has %d variables %v, want exactly one", cmd.CommandPath(), f.Name, len(env), env)
				return
			}
			all = append(all, envFlag{path: path, flag: f.Name, env: env[0], old: f.Annotations[oldEnvAnnotation]})
		}
		cmd.LocalNonPersistentFlags().VisitAll(visit)
		cmd.PersistentFlags().VisitAll(visit)
		for _, sub := range cmd.Commands() {
			walk(sub, append(slices.Clone(path), sub.Name()))
		}
	}
	walk(root, nil)
	if len(all) < 40 {
		t.Fatalf("found %d flags with variables: the walk missed commands", len(all))
	}
	commands := map[string]map[string]bool{} // variable -> the commands whose flags it sets
	flagOf := map[string]string{}            // variable -> the flag it sets
	for _, f := range all {
		if commands[f.env] == nil {
			commands[f.env] = map[string]bool{}
		}
		commands[f.env][strings.Join(f.path, " ")] = true
		if prev, ok := flagOf[f.env]; ok && prev != f.flag {
			t.Errorf("%s sets both --%s and --%s", f.env, prev, f.flag)
		}
		flagOf[f.env] = f.flag
	}
	for _, f := range all {
		shared := "INGEST_" + envName(f.flag)
		if c, ok := conventional[f.flag]; ok && len(f.path) == 0 {
			shared = c
		}
		own := "INGEST_" + envName(strings.Join(f.path, "_")) + "_" + envName(f.flag)
		switch {
		case len(f.path) == 0 && f.env != shared:
			t.Errorf("%s reads %s; a setting of every command is %s", f, f.env, shared)
		case len(f.path) == 0:
		case f.env == shared && len(commands[f.env]) < 2:
			t.Errorf("%s reads %s, the name of a shared setting, but no other command shares it: want %s", f, f.env, own)
		case f.env != shared && f.env != own:
			t.Errorf("%s reads %s, want %s (or %s if several commands share it)", f, f.env, own, shared)
		}
		for _, o := range f.old {
			if _, current := flagOf[o]; current {
				t.Errorf("%s still reads %s, which is another flag's variable", f, o)
			}
		}
	}
}

// An INGEST_* variable that is no setting's name is reported with the
// name meant: the same flag by another spelling of the rule, else the
// nearest name; an old name still read says it is renamed.
func TestUnknownVariablesNameTheClosest(t *testing.T) {
	for _, tc := range []struct{ set, want string }{
		{"INGEST_RUN_KEEP", "INGEST_RUN_KEEP is not a setting of ingest and is ignored: did you mean INGEST_KEEP?"},
		{"INGEST_PRUNE_KEEP", "did you mean INGEST_KEEP?"},
		{"INGEST_SERVE_API_PLANS", "did you mean INGEST_API_PLANS?"},
		{"INGEST_RUN_EVRY", "did you mean INGEST_RUN_EVERY?"},
		{"INGEST_EVERY", "did you mean INGEST_RUN_EVERY?"},
		{"INGEST_REDIS", "did you mean REDIS_URL?"},
		{"INGEST_ADD_PLAN", "INGEST_ADD_PLAN is read for ingest tokens add --plan until the next release: rename it INGEST_TOKENS_ADD_PLAN"},
		{"INGEST_CATEGORIES", "INGEST_CATEGORIES is read for ingest run --categories until the next release: rename it INGEST_RUN_CATEGORIES"},
		{"INGEST_RUN_CATEGORIES", ""},
		{"INGEST_UI_TOKEN", ""},
		{"INGEST_KEEP", ""},
	} {
		notes := envNotes(newRoot(), []string{"PATH=/bin", tc.set + "=x"})
		var got string
		if len(notes) > 0 {
			got = notes[0].String()
		}
		if (tc.want == "") != (got == "") || !strings.Contains(got, tc.want) {
			t.Errorf("%s: got %q, want %q", tc.set, got, tc.want)
		}
	}
}

package main

import (
	"slices"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/ingestworks/ingest/util/envflag"
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
	var all []envflag.Flag
	var walk func(cmd *cobra.Command, path []string)
	walk = func(cmd *cobra.Command, path []string) {
		visit := func(f *pflag.Flag) {
			if f.Name == "help" || f.Name == "version" {
				return
			}
			env := f.Annotations[envflag.Annotation]
			if len(env) != 1 {
				t.Errorf("%s --%s has %d variables %v, want exactly one", cmd.CommandPath(), f.Name, len(env), env)
				return
			}
			all = append(all, envflag.Flag{Path: path, Flag: f.Name, Env: env[0], Old: f.Annotations[envflag.OldAnnotation]})
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
		if commands[f.Env] == nil {
			commands[f.Env] = map[string]bool{}
		}
		commands[f.Env][strings.Join(f.Path, " ")] = true
		if prev, ok := flagOf[f.Env]; ok && prev != f.Flag {
			t.Errorf("%s sets both --%s and --%s", f.Env, prev, f.Flag)
		}
		flagOf[f.Env] = f.Flag
	}
	for _, f := range all {
		shared := "INGEST_" + envflag.Name(f.Flag)
		if c, ok := conventional[f.Flag]; ok && len(f.Path) == 0 {
			shared = c
		}
		own := "INGEST_" + envflag.Name(strings.Join(f.Path, "_")) + "_" + envflag.Name(f.Flag)
		switch {
		case len(f.Path) == 0 && f.Env != shared:
			t.Errorf("%s reads %s; a setting of every command is %s", f, f.Env, shared)
		case len(f.Path) == 0:
		case f.Env == shared && len(commands[f.Env]) < 2:
			t.Errorf("%s reads %s, the name of a shared setting, but no other command shares it: want %s", f, f.Env, own)
		case f.Env != shared && f.Env != own:
			t.Errorf("%s reads %s, want %s (or %s if several commands share it)", f, f.Env, own, shared)
		}
		for _, o := range f.Old {
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
		{"INGEST_UI_TOKEN_FILE", "did you mean INGEST_UI_TOKEN?"},
		{"INGEST_HTTP_PROXY_HOST", "no setting's name is near it"},
		{"INGEST_ADD_PLAN", "INGEST_ADD_PLAN is read for ingest tokens add --plan until the next release: rename it INGEST_TOKENS_ADD_PLAN"},
		{"INGEST_CATEGORIES", "INGEST_CATEGORIES is read for ingest run --categories until the next release: rename it INGEST_RUN_CATEGORIES"},
		{"INGEST_RUN_CATEGORIES", ""},
		{"INGEST_UI_TOKEN", ""},
		{"INGEST_KEEP", ""},
	} {
		notes := envflag.Notes(newRoot(), []string{"PATH=/bin", tc.set + "=x"}, envOnly)
		var got string
		if len(notes) > 0 {
			got = notes[0].String()
		}
		if (tc.want == "") != (got == "") || !strings.Contains(got, tc.want) {
			t.Errorf("%s: got %q, want %q", tc.set, got, tc.want)
		}
	}
}

package main

import (
	"os"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// envAnnotation holds a flag's environment variable.
const envAnnotation = "env"

// withEnv ties flag f to the environment variable env and lists it in the
// flag's help.
func withEnv(f *pflag.Flag, env string) {
	if f.Annotations == nil {
		f.Annotations = map[string][]string{}
	}
	f.Annotations[envAnnotation] = []string{env}
	f.Usage += " [$" + env + "]"
}

// commandEnv gives every local flag of cmd the variable
// INGEST_<COMMAND>_<FLAG> (INGEST_RUN_EVERY for run --every), so that a
// container or a unit file can set any of them without a command line.
func commandEnv(cmd *cobra.Command) *cobra.Command {
	prefix := "INGEST_" + envName(cmd.Name()) + "_"
	cmd.Flags().VisitAll(func(f *pflag.Flag) {
		if _, ok := f.Annotations[envAnnotation]; !ok {
			withEnv(f, prefix+envName(f.Name))
		}
	})
	return cmd
}

func envName(s string) string { return strings.ToUpper(strings.ReplaceAll(s, "-", "_")) }

// applyEnv sets every flag of cmd that was not given on the command line
// from its environment variable, when that is set.
func applyEnv(cmd *cobra.Command) error {
	var err error
	cmd.Flags().VisitAll(func(f *pflag.Flag) {
		env := f.Annotations[envAnnotation]
		if err != nil || len(env) == 0 || f.Changed {
			return
		}
		v, ok := os.LookupEnv(env[0])
		if !ok {
			return
		}
		// Set through the flag set, so that the flag counts as given.
		if serr := cmd.Flags().Set(f.Name, v); serr != nil {
			err = usageErrorf("%s (for --%s): %v", env[0], f.Name, serr)
		}
	})
	return err
}

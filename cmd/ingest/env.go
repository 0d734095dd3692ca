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

// commandEnv gives every local flag of cmd and of its subcommands the
// variable INGEST_<COMMAND>_<FLAG>, the command being its whole path
// below the root (INGEST_RUN_EVERY for run --every, INGEST_TOKENS_ADD_PLAN
// for tokens add --plan), so that a container or a unit file can set any
// of them without a command line.
func commandEnv(cmd *cobra.Command) *cobra.Command {
	nameEnv(cmd, "INGEST_"+envName(cmd.Name())+"_")
	return cmd
}

func nameEnv(cmd *cobra.Command, prefix string) {
	cmd.LocalNonPersistentFlags().VisitAll(func(f *pflag.Flag) {
		if _, ok := f.Annotations[envAnnotation]; !ok {
			withEnv(f, prefix+envName(f.Name))
			if cmd.HasParent() {
				// The name these flags had before they followed the
				// command's path (INGEST_ADD_PLAN), still read.
				f.Annotations[envAnnotation] = append(f.Annotations[envAnnotation], "INGEST_"+envName(cmd.Name())+"_"+envName(f.Name))
			}
		}
	})
	for _, sub := range cmd.Commands() {
		nameEnv(sub, prefix+envName(sub.Name())+"_")
	}
}

func envName(s string) string { return strings.ToUpper(strings.ReplaceAll(s, "-", "_")) }

// applyEnv sets every flag of cmd that was not given on the command line
// from its environment variable, when that is set: the first of its names
// that is.
func applyEnv(cmd *cobra.Command) error {
	var err error
	cmd.Flags().VisitAll(func(f *pflag.Flag) {
		if err != nil || f.Changed {
			return
		}
		name, v, ok := lookupEnv(f.Annotations[envAnnotation])
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

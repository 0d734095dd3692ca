package main

import (
	"bytes"
	"io"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"
)

// What a package logs through the process's default logger (a long
// upgrade of the database) reaches the command's stderr in the command's
// format: JSON under --log-format json, the text handler's for a command
// that takes no log setting. Not parallel: it sets the process's logger.
func TestTheDefaultLoggerIsTheCommands(t *testing.T) {
	was := slog.Default()
	t.Cleanup(func() { slog.SetDefault(was) })
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"json", []string{"tokens", "list", "--log-format", "json"}, `"msg":"store: at work","step":"s"`},
		{"a command without log settings", []string{"prune"}, `level=INFO msg="store: at work" step=s`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var stderr bytes.Buffer
			root := newRoot()
			root.SetArgs(append(tc.args, "--db", filepath.Join(t.TempDir(), "none.db")))
			root.SetOut(io.Discard)
			root.SetErr(&stderr)
			_ = root.Execute() // no database: each stops once its settings are read
			slog.Info("store: at work", "step", "s")
			if !strings.Contains(stderr.String(), tc.want) {
				t.Errorf("stderr:\n%s\nwant the default logger's line %s", stderr.String(), tc.want)
			}
		})
	}
}

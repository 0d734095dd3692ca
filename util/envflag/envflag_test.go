package envflag

import (
	"testing"

	"github.com/spf13/cobra"
)

// Nearest names the flag a mistyped one meant: a prefix of it, or within
// two edits; nothing for a word far from every flag.
func TestNearest(t *testing.T) {
	cmd := &cobra.Command{Use: "run"}
	for _, f := range []string{"regions", "every", "json", "listen"} {
		cmd.Flags().String(f, "", "")
	}
	for give, want := range map[string]string{"region": "regions", "evry": "every", "jsn": "json", "listn": "listen", "zzz": "", "categories": ""} {
		if got := Nearest(cmd, give); got != want {
			t.Errorf("Nearest(--%s) = %q, want %q", give, got, want)
		}
	}
}

// Given names the variable that gave a flag its value, else the flag.
func TestGiven(t *testing.T) {
	cmd := &cobra.Command{Use: "serve"}
	cmd.Flags().String("listen", "", "")
	cmd.Flags().String("public", "", "")
	With(cmd.Flags().Lookup("listen"), "INGEST_SERVE_LISTEN")
	With(cmd.Flags().Lookup("public"), "INGEST_SERVE_PUBLIC")
	t.Setenv("INGEST_SERVE_LISTEN", "8080")
	if err := Apply(cmd); err != nil {
		t.Fatal(err)
	}
	if got := Given(cmd.Flags().Lookup("listen")); got != "INGEST_SERVE_LISTEN (for --listen)" {
		t.Errorf("a value from the variable: Given = %q", got)
	}
	if got := Given(cmd.Flags().Lookup("public")); got != "--public" {
		t.Errorf("no value from a variable: Given = %q", got)
	}
}

package main

// End-to-end tests of what an operator reads: help that tells the truth,
// errors that name the fix.

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// backfill --help prices a page as the shipped costs.yaml does, the same
// words --dry-run prints for a page.
func TestBackfillHelpPricesAPageAsDryRun(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	plan := h.mustRun(0, "backfill", "--region", "US", "--since", "2026-01-01", "--dry-run")
	m := regexp.MustCompile(`\(a page: ([^)]+)\)`).FindStringSubmatch(plan.stdout)
	if m == nil {
		t.Fatalf("--dry-run prints no page cost:\n%s", plan)
	}
	help := h.mustRun(0, "backfill", "--help")
	text := strings.Join(strings.Fields(help.stdout), " ")
	if !strings.Contains(text, m[1]) || strings.Contains(text, "100 units") {
		t.Errorf("backfill --help does not price a page as --dry-run does (%q):\n%s", m[1], help.stdout)
	}
}

// run --once --every prints the plan at the default level, as run --help,
// docs/operations.md and ingest-once.service say.
func TestRunOnceEveryPrintsThePlan(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	res := h.mustRun(0, "run", "--once", "--every", "1h", "--regions", "US", "--log-format", "json")
	pools := map[any]bool{}
	for _, l := range jsonLines(t, res.stderr) {
		if l["msg"] == "plan" {
			pools[l["pool"]] = true
		}
	}
	if !pools["default"] {
		t.Errorf("run --once --every 1h: no plan line for the default pool at info:\n%s", res.stderr)
	}
}

// Every flag of a command below the root is read from INGEST_<PATH>_<FLAG>,
// its path the commands' names below the root (tokens add --plan:
// INGEST_TOKENS_ADD_PLAN), unless it has a name of its own.
func TestCommandFlagsFollowTheirPath(t *testing.T) {
	own := map[string]bool{}
	for _, c := range commonSettings() {
		own[c.env] = true
	}
	for _, env := range []string{keepEnv, apiPlansEnv, categoriesEnv} {
		own[env] = true
	}
	var walk func(cmd *cobra.Command, path string)
	walk = func(cmd *cobra.Command, path string) {
		cmd.LocalFlags().VisitAll(func(f *pflag.Flag) {
			env := f.Annotations[envAnnotation]
			if len(env) == 0 {
				return // help, version: no variable
			}
			if want := "INGEST_" + path + "_" + envName(f.Name); env[0] != want && !own[env[0]] {
				t.Errorf("%s --%s reads %s, want %s", cmd.CommandPath(), f.Name, env[0], want)
			}
		})
		for _, sub := range cmd.Commands() {
			walk(sub, strings.TrimPrefix(path+"_"+envName(sub.Name()), "_"))
		}
	}
	walk(newRoot(), "")
}

// tokens add and tokens list read their flags from the documented names,
// and still from the names they had before.
func TestTokensReadTheirVariables(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.set("INGEST_TOKENS_ADD_PLAN", "standard")
	h.mustRun(0, "tokens", "add", "acme")
	h.unset("INGEST_TOKENS_ADD_PLAN")
	h.set("INGEST_ADD_PLAN", "standard")
	h.mustRun(0, "tokens", "add", "bolt")
	h.set("INGEST_TOKENS_LIST_JSON", "true")
	res := h.mustRun(0, "tokens", "list")
	var list []map[string]any
	if err := json.Unmarshal([]byte(res.stdout), &list); err != nil || len(list) != 2 {
		t.Errorf("INGEST_TOKENS_LIST_JSON=true: want a JSON array of two tokens, got %v\n%s", err, res)
	}
}

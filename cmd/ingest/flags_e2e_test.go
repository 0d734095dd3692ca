package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/ingestworks/ingest/util/envflag"
)

// 7. Usage and configuration errors exit 2 before anything is written or
// sent upstream.
func TestUsageErrorsExit2BeforeAnythingIsWritten(t *testing.T) {
	t.Parallel()
	badCosts := `pools:
  default: {limit: 10000, reserve: 500, window: 24h}
  search:  {limit: 100,   reserve: 0,   window: 24h}
  stats:   {limit: 10000, reserve: 0,   window: 24h}
operations:
  videos.list:          {default: 0}
  videoCategories.list: {default: 1}
  i18nRegions.list:     {default: 1}
  search.list:          {search: 1}
  videos.batchGetStats: {stats: 1}
`
	for _, tc := range []struct {
		name  string
		setup func(h *harness)
		args  []string
		want  *regexp.Regexp // what the message must name
	}{
		{"missing API key", func(h *harness) { h.unset("YOUTUBE_API_KEY") }, []string{"run", "--once"}, regexp.MustCompile(`YOUTUBE_API_KEY`)},
		{"blank API key", func(h *harness) { h.set("YOUTUBE_API_KEY", "  ") }, []string{"run", "--once"}, regexp.MustCompile(`YOUTUBE_API_KEY`)},
		{"backfill missing API key", func(h *harness) { h.unset("YOUTUBE_API_KEY") }, []string{"backfill", "--region", "US", "--since", "2026-10-01"}, regexp.MustCompile(`YOUTUBE_API_KEY`)},
		{"unknown region", nil, []string{"run", "--once", "--regions", "US,XX"}, regexp.MustCompile(`--regions.*XX`)},
		{"empty regions", nil, []string{"run", "--once", "--regions", ""}, regexp.MustCompile(`--regions: is empty`)},
		{"empty regions env", func(h *harness) { h.set("INGEST_RUN_REGIONS", " ") }, []string{"run", "--once"}, regexp.MustCompile(`--regions: is empty`)},
		{"report empty regions", nil, []string{"report", "--regions", ","}, regexp.MustCompile(`--regions: is empty`)},
		{"unknown quota subcommand", nil, []string{"quota", "bogus"}, regexp.MustCompile(`unknown command "bogus" for "ingest quota"`)},
		{"quota apply with an argument", nil, []string{"quota", "apply", "extra"}, regexp.MustCompile(`extra`)},
		{"every below a minute", nil, []string{"run", "--every", "30s"}, regexp.MustCompile(`--every`)},
		{"max-stale below every", nil, []string{"run", "--every", "2h", "--max-stale", "1h"}, regexp.MustCompile(`--max-stale: must be at least --every \(2h0m0s\), got 1h0m0s`)},
		{"max-stale env below every", func(h *harness) { h.set("INGEST_RUN_MAX_STALE", "30m") }, []string{"run"}, regexp.MustCompile(`--max-stale`)},
		{"start timeout of none", nil, []string{"run", "--start-timeout", "0s"}, regexp.MustCompile(`--start-timeout \(INGEST_RUN_START_TIMEOUT\): must be more than 0`)},
		{"bad costs file", func(h *harness) {
			path := filepath.Join(h.dir, "costs-bad.yaml")
			if err := os.WriteFile(path, []byte(badCosts), 0o644); err != nil {
				h.t.Fatal(err)
			}
			h.set("INGEST_COSTS", path)
		}, []string{"run", "--once"}, regexp.MustCompile(`costs-bad\.yaml(:6\b|.*line 6\b).*videos\.list`)},
		{"missing costs file", func(h *harness) { h.set("INGEST_COSTS", filepath.Join(h.dir, "nope.yaml")) }, []string{"run", "--once"}, regexp.MustCompile(`nope\.yaml`)},
		{"unknown flag", nil, []string{"run", "--once", "--bogus"}, regexp.MustCompile(`--bogus`)},
		{"stray argument", nil, []string{"run", "--once", "US"}, regexp.MustCompile(`US`)},
		{"log format xml", nil, []string{"run", "--once", "--log-format", "xml"}, regexp.MustCompile(`--log-format.*xml`)},
		{"log format env", func(h *harness) { h.set("INGEST_LOG_FORMAT", "xml") }, []string{"run", "--once"}, regexp.MustCompile(`INGEST_LOG_FORMAT`)},
		{"backfill since not a date", nil, []string{"backfill", "--region", "US", "--since", "notadate"}, regexp.MustCompile(`--since.*notadate`)},
		{"backfill missing since", nil, []string{"backfill", "--region", "US"}, regexp.MustCompile(`--since`)},
		{"backfill until before since", nil, []string{"backfill", "--region", "US", "--since", "2026-10-01", "--until", "2026-09-01"}, regexp.MustCompile(`--until`)},
		{"backfill unknown region", nil, []string{"backfill", "--region", "ZZ", "--since", "2026-10-01"}, regexp.MustCompile(`--region.*ZZ`)},
		{"backfill max-units below a page", nil, []string{"backfill", "--region", "US", "--since", "2026-10-01", "--max-units", "1"}, regexp.MustCompile(`--max-units: one search page costs 2 units`)},
		{"backfill negative max-units", nil, []string{"backfill", "--region", "US", "--since", "2026-10-01", "--max-units", "-5"}, regexp.MustCompile(`--max-units`)},
		{"search without a query", nil, []string{"search"}, regexp.MustCompile(`QUERY`)},
		{"search blank query", nil, []string{"search", "  "}, regexp.MustCompile(`QUERY`)},
		{"search limit 0", nil, []string{"search", "football", "--limit", "0"}, regexp.MustCompile(`--limit`)},
		{"search unknown region", nil, []string{"search", "football", "--region", "ZZ"}, regexp.MustCompile(`--region`)},
		{"report every below a minute", nil, []string{"report", "--every", "30s"}, regexp.MustCompile(`--every`)},
		{"bad quota key", func(h *harness) { h.set("INGEST_QUOTA_KEY", "a b") }, []string{"run", "--once"}, regexp.MustCompile(`INGEST_QUOTA_KEY`)},
		{"bad listen address", nil, []string{"run", "--listen", "nope"}, regexp.MustCompile(`--listen`)},
		{"bad cache control", nil, []string{"serve", "--cache-control", "s-maxage=ten"}, regexp.MustCompile(`--cache-control: s-maxage: want whole seconds`)},
		{"bad purge url", nil, []string{"serve", "--purge-url", "http://127.0.0.1:6081/,varnish:6081"}, regexp.MustCompile(`--purge-url: want absolute http or https URLs`)},
		{"cache control env", func(h *harness) { h.set("INGEST_CACHE_CONTROL", "private=1") }, []string{"run", "--once"},
			regexp.MustCompile(`INGEST_CACHE_CONTROL \(for --cache-control\): unknown directive "private"`)},
		{"bad redis URL", func(h *harness) { h.set("REDIS_URL", "notredis://x") }, []string{"run", "--once"}, regexp.MustCompile(`REDIS_URL`)},
		{"backfill bad redis URL", func(h *harness) { h.set("REDIS_URL", "notredis://x") }, []string{"backfill", "--region", "US", "--since", "2026-10-01"}, regexp.MustCompile(`REDIS_URL`)},
		{"bad endpoint", func(h *harness) { h.set("YOUTUBE_ENDPOINT", "http://[::1") }, []string{"run", "--once"}, regexp.MustCompile(`YOUTUBE_ENDPOINT|--youtube-endpoint`)},
		{"endpoint with the API's path", func(h *harness) { h.set("YOUTUBE_ENDPOINT", h.srv.URL+"/youtube/v3/") }, []string{"run", "--once"},
			regexp.MustCompile(`YOUTUBE_ENDPOINT: give the API's base URL without youtube/v3/, which the client adds: http://127\.0\.0\.1:\d+/, not`)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t)
			if tc.setup != nil {
				tc.setup(h)
			}
			res := h.run(tc.args...)
			if res.code != 2 {
				t.Errorf("want exit 2, got %s", res)
			}
			if !tc.want.MatchString(res.stderr) {
				t.Errorf("stderr does not match %q:\n%s", tc.want, res.stderr)
			}
			if _, err := os.Stat(h.db()); err == nil {
				t.Errorf("database %s was created by a command that exited on a usage error", h.db())
			}
			if n := h.fake.Requests(); n != 0 {
				t.Errorf("upstream saw %d requests, want 0", n)
			}
		})
	}
}

// 4a. Every flag of every command has an environment variable, listed in
// its --help, and the variable works.
func TestEveryFlagHasAnEnvVar(t *testing.T) {
	t.Parallel()
	var walk func(cmd *cobra.Command)
	walk = func(cmd *cobra.Command) {
		cmd.InitDefaultHelpFlag()
		cmd.Flags().VisitAll(func(f *pflag.Flag) {
			if f.Name == "help" || f.Name == "version" {
				return
			}
			env := f.Annotations[envflag.Annotation] // its name, then any older one
			if len(env) == 0 || !strings.Contains(f.Usage, "[$"+env[0]+"]") {
				t.Errorf("%s --%s: no environment variable in its help (%q)", cmd.CommandPath(), f.Name, f.Usage)
			}
		})
		for _, c := range cmd.Commands() {
			walk(c)
		}
	}
	walk(newRoot())
	h := newHarness(t)
	h.set("INGEST_RUN_REGIONS", "US,XX")
	if res := h.run("run", "--once"); res.code != 2 || !strings.Contains(res.stderr, "XX") {
		t.Errorf("INGEST_RUN_REGIONS=US,XX: want exit 2 naming XX, got %s", res)
	}
	help := h.mustRun(0, "backfill", "--help")
	if !strings.Contains(help.stdout, "[$INGEST_BACKFILL_SINCE]") {
		t.Errorf("backfill --help does not list INGEST_BACKFILL_SINCE:\n%s", help.stdout)
	}
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
